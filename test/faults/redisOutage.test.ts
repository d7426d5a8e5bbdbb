import {
  LOG_LEVELS,
  logEntries,
  logMessage,
  sampleOf,
  scrape,
  type TestProcess,
} from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const cluster = useTestCluster({
  workers: 1,
  model: { respond: () => ({ kind: "text", text: "hello" }) },
  redis: { privateServer: true },
});

const COMPLETED = 'yiem_queue_jobs{queue="coordinator",state="completed"}';

/** GET `path` on the coordinator: its status and body (a fetch that takes 10 s fails). */
async function get(path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${cluster.coordinatorUrls[0]}${path}`, {
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

/** Asks `/readyz` until it answers `status`, for up to `timeoutMs`; returns the body. */
async function waitForReadyz(status: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = { status: 0, body: "" };
  while (Date.now() < deadline) {
    last = await get("/readyz");
    if (last.status === status) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz answered ${last.status} ${last.body}, not ${status}`);
}

/** Each process's line count when Redis was killed. */
const linesAtKill = new Map<TestProcess, number>();

/** The messages of the warn-or-worse lines `process` wrote since Redis was killed. */
function warningsSinceKill(process: TestProcess): string[] {
  return process.lines.slice(linesAtKill.get(process) ?? 0).flatMap((line) => {
    const entry = line.startsWith("{")
      ? (JSON.parse(line) as { level: number; msg: string })
      : undefined;
    return entry && entry.level >= LOG_LEVELS.warn ? [entry.msg] : [];
  });
}

describe("a cluster whose Redis dies and comes back", () => {
  it("is ready while Redis answers, and /metrics has queue depths and process metrics", async () => {
    const { runId } = await cluster.client.send("hi");
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(await get("/readyz")).toEqual({ status: 200, body: "ready\n" });
    const metrics = await scrape(`${cluster.coordinatorUrls[0]}/metrics`);
    expect(sampleOf(metrics, COMPLETED)).toBe(1);
    expect(metrics).toContain("nodejs_eventloop_lag_seconds");
    expect(metrics).toContain("nodejs_heap_size_used_bytes");
    expect(sampleOf(metrics, "yiem_queue_jobs_age_seconds")).toBeLessThan(5);
  });

  it("answers /readyz 503 with a reason, and /metrics at once with the last depths, while Redis is down", async () => {
    for (const p of [...cluster.coordinators, ...cluster.workers])
      linesAtKill.set(p, p.lines.length);
    await cluster.redis.kill("SIGKILL");
    const reason = await waitForReadyz(503, 5000);
    expect(reason).toMatch(/^redis unreachable: .+\n$/);
    expect(reason.trim().split("\n")).toHaveLength(1);
    expect((await get("/healthz")).status).toBe(200); // liveness: the process still runs

    await new Promise((resolve) => setTimeout(resolve, 1000)); // the depths are a second old
    const asked = Date.now();
    const metrics = await scrape(`${cluster.coordinatorUrls[0]}/metrics`, 10_000);
    // The behaviour is "does not hang" (it hung past 15 s); 3 s is generous for a 0.5 s deadline.
    expect(Date.now() - asked).toBeLessThan(3000);
    expect(sampleOf(metrics, COMPLETED)).toBe(1);
    expect(sampleOf(metrics, "yiem_queue_jobs_age_seconds")).toBeGreaterThanOrEqual(1);
    expect(metrics).toContain("nodejs_eventloop_lag_seconds");
  });

  it("is ready again once Redis is back; each process logged the outage once and the recovery once", async () => {
    await new Promise((resolve) => setTimeout(resolve, 2000)); // several reconnect attempts fail
    await cluster.redis.restart();
    expect(await waitForReadyz(200, 15_000)).toBe("ready\n");
    const processes = [...cluster.coordinators, ...cluster.workers];
    await Promise.all(processes.map((p) => p.waitForLine(logMessage("redis reachable again"))));
    for (const process of processes) {
      const unreachable = logEntries(process, "redis unreachable; retrying");
      const recovered = logEntries(process, "redis reachable again");
      expect(unreachable.map((entry) => entry.level)).toEqual([LOG_LEVELS.warn]);
      expect(recovered.map((entry) => entry.level)).toEqual([LOG_LEVELS.info]);
      expect(recovered[0]?.downMs).toBeGreaterThanOrEqual(2000);
      // One warning for the whole outage, not one per reconnect attempt. (A coordinator whose
      // blocking fetch outlived the outage on a loaded machine also says so: another warning.)
      const warnings = warningsSinceKill(process).filter((msg) => !msg.includes("fetch is stuck"));
      expect(warnings).toEqual(["redis unreachable; retrying"]);
    }
    const { runId } = await cluster.client.send("hi again");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "hello" }]);
  });
});
