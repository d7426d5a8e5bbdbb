/**
 * The operations side of every role, through real HTTP against a real cluster: the gateway's
 * operations port (`GATEWAY_OPS_PORT`: `/healthz`, `/readyz`, `/metrics` without a key, none
 * of them on its API port), its request, 429 and open-stream metrics, its readiness without
 * Redis and while its connection comes up; a worker's `/readyz`; a coordinator's cluster-wide gauges of parked runs and pending
 * approvals (docs/METRICS.md); and `yiem send` timing a call that waited for approval from
 * its approval, with the wait shown apart.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  type ScriptedReply,
  type ScriptedRequest,
  sampleOf,
  scrape,
  waitForSample,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openEventStream,
  startGatewayProcess,
  writeKeysFile,
} from "../gateway/support.js";
import { startCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { startHoldingProxy } from "../support/holdingProxy.js";

type Wire = { role: string; content: unknown };

/** `approve <label>` calls `ledgerApproval` (it waits for a decision); anything else answers `hi`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "done" };
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const [verb, label = "x"] = text.split(" ");
  if (verb !== "approve") return { kind: "text", text: "hi" };
  return {
    kind: "toolCalls",
    calls: [{ id: `call-${label}`, name: "ledgerApproval", arguments: { label } }],
  };
}

const cluster = useTestCluster({ workers: 0, model: { respond } });
const reader = makeKey("reader", { scopes: ["submit", "read"], requestsPerMinute: 4 });
const other = makeKey("other", { scopes: ["submit", "read"] });
let gateway: GatewayProcess;
let opsUrl = "";
let workerUrl = "";
const stopped: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-ops-")), "keys.jsonl");
  await writeKeysFile(file, [reader, other]);
  const opsPort = await freePort();
  opsUrl = `http://127.0.0.1:${opsPort}`;
  const workerPort = await freePort();
  workerUrl = `http://127.0.0.1:${workerPort}`;
  const worker = await cluster.addWorkerWith({ WORKER_PORT: String(workerPort) });
  stopped.push(() => worker.stop(3000));
  gateway = await startGatewayProcess(cluster.env, {
    YIEM_API_KEYS: file,
    GATEWAY_OPS_PORT: String(opsPort),
  });
  stopped.push(() => gateway.process.stop(3000));
}, 120_000);

afterAll(async () => {
  await Promise.all(stopped.map((stop) => stop()));
});

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

describe("the gateway's operations port", () => {
  it("answers /healthz, /readyz and /metrics without a key, and the API port serves none of them", async () => {
    const health = await get(`${opsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text).status).toBe("ok");
    expect(await get(`${opsUrl}/readyz`)).toEqual({ status: 200, text: "ready\n" });
    const metrics = await get(`${opsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("# TYPE yiem_gateway_requests_total counter");
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      expect((await callGateway(gateway.url, other.secret, "GET", path)).status).toBe(404);
    }
  });

  it("counts requests by route template and status, and 429s by their code", async () => {
    const sessionPath = "/v1/sessions/s-ops-1";
    expect((await callGateway(gateway.url, undefined, "GET", "/v1/agents")).status).toBe(401);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await callGateway(gateway.url, reader.secret, "GET", sessionPath)).status);
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(2); // 4 a minute
    const text = await scrape(`${opsUrl}/metrics`);
    const route = 'route="/v1/sessions/{id}"';
    expect(sampleOf(text, `yiem_gateway_requests_total{method="GET",${route},status="404"}`)).toBe(
      4,
    );
    expect(sampleOf(text, `yiem_gateway_requests_total{method="GET",${route},status="429"}`)).toBe(
      2,
    );
    expect(
      sampleOf(text, 'yiem_gateway_requests_total{method="GET",route="/v1/agents",status="401"}'),
    ).toBe(1);
    expect(sampleOf(text, 'yiem_gateway_rate_limited_total{code="rate_limited"}')).toBe(2);
    expect(text).not.toContain("s-ops-1"); // a path a client sent is never a label
  });

  it("shows the event streams open now", async () => {
    const run = await callGateway(gateway.url, other.secret, "POST", "/v1/runs?wait=true", {
      body: { input: "hello" },
    });
    expect(run.status).toBe(200);
    const series = 'yiem_gateway_open_connections{kind="stream"}';
    const stream = await openEventStream(
      gateway.url,
      other.secret,
      `/v1/sessions/${run.body.sessionId}/events`,
    );
    expect(stream.status).toBe(200);
    await waitForSample(`${opsUrl}/metrics`, series, 1);
    stream.close();
    await waitForSample(`${opsUrl}/metrics`, series, 0);
  });

  it("stays alive but says not ready while Redis is unreachable", async () => {
    const deadRedis = `redis://127.0.0.1:${await freePort()}`;
    const opsPort = await freePort();
    const cut = await startGatewayProcess(
      { ...cluster.env, REDIS_URL: deadRedis },
      { GATEWAY_OPS_PORT: String(opsPort) },
      { compiled: true }, // as deployed; and quicker to start than from sources
    );
    stopped.push(() => cut.process.stop(3000));
    const url = `http://127.0.0.1:${opsPort}`;
    expect((await get(`${url}/healthz`)).status).toBe(200);
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.text).toMatch(/^redis unreachable/);
  }, 90_000);

  it("says ready as soon as its Redis connection comes up, not not-ready while it does", async () => {
    const slow = await startHoldingProxy(cluster.redis.url, () => true);
    stopped.push(() => slow.close());
    const opsPort = await freePort();
    const held = await startGatewayProcess(
      { ...cluster.env, REDIS_URL: slow.url },
      { GATEWAY_OPS_PORT: String(opsPort) },
      { compiled: true },
    );
    stopped.push(() => held.process.stop(3000));
    // Its connection is open but Redis has not answered it yet: a probe now waits for it.
    const probe = get(`http://127.0.0.1:${opsPort}/readyz`);
    setTimeout(() => slow.open(), 200);
    expect(await probe).toEqual({ status: 200, text: "ready\n" });
  }, 90_000);
});

describe("a worker's /readyz", () => {
  it("is ready once the worker consumes its queues with its tools loaded", async () => {
    expect(await get(`${workerUrl}/readyz`)).toEqual({ status: 200, text: "ready\n" });
  });
});

describe("a coordinator's run gauges", () => {
  it("counts a run parked for approval and its pending call cluster-wide, and neither once decided", async () => {
    const metricsUrl = `${cluster.coordinatorUrls[0]}/metrics`;
    await waitForSample(metricsUrl, "yiem_approvals_pending", 0);
    const sent = await cluster.client.send("approve ops1");
    await expect
      .poll(async () => (await cluster.client.pendingApprovals(sent.sessionId)).length, {
        timeout: 20_000,
      })
      .toBe(1);
    await waitForSample(metricsUrl, "yiem_approvals_pending", 1);
    await waitForSample(metricsUrl, "yiem_runs_parked", 1);
    expect(sampleOf(await scrape(metricsUrl), "yiem_runs_running")).toBe(0); // parked: not held
    const [pending] = await cluster.client.pendingApprovals(sent.sessionId);
    await cluster.client.approve(sent.sessionId, pending?.callKey ?? "");
    await cluster.client.waitForResponse(sent.requestId);
    await waitForSample(metricsUrl, "yiem_approvals_pending", 0);
    await waitForSample(metricsUrl, "yiem_runs_parked", 0);
  }, 60_000);
});

describe("the duration of a call that waited for approval", () => {
  it("counts from the approval in `yiem send`, and shows the wait apart", async () => {
    const send = startCli(["send", "approve w1"], cluster.env);
    const [, sessionId = ""] = await send.waitFor(/yiem approve (\S+) call-w1/);
    await new Promise((resolve) => setTimeout(resolve, 4000)); // a person takes a while
    await cluster.client.approve(sessionId, "call-w1");
    const run = await send.done;
    expect(run.code).toBe(0);
    const pattern =
      /^✔ ledgerApproval\(.*\) on worker-\d+ (\d+) ms after (\d+) ms awaiting approval — /m;
    expect(run.stdout).toMatch(pattern);
    const line = run.stdout.match(pattern);
    const [, ranMs = "", waitedMs = ""] = line ?? [];
    expect(Number(waitedMs)).toBeGreaterThanOrEqual(4000);
    expect(Number(ranMs)).toBeLessThan(Number(waitedMs));
  }, 60_000);
});
