/**
 * Per-tool limits across the cluster: a tool's `concurrency` and `rateLimit` hold across all
 * workers (BullMQ's global concurrency and rate limiter on the tool's own queue), and the
 * model still gets every result in call order.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** `limited`: 20 calls of limitedStep (150 ms); `rated`: 15 calls of ratedStep; then the results. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  if (messages.at(-1)?.role === "tool") {
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    const results = messages.slice(lastUser).filter((m) => m.role === "tool");
    return { kind: "text", text: results.map((m) => String(m.content)).join(" | ") };
  }
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const [tool, count, ms] =
    text === "limited" ? ["limitedStep", 20, 150] : (["ratedStep", 15, 10] as const);
  const calls = Array.from({ length: count }, (_, i) => ({
    id: `${text}-${i}`,
    name: tool,
    arguments: { label: `${text[0]}${i}`, ms },
  }));
  return { kind: "toolCalls", calls };
}

let timeline: string;

const cluster = useTestCluster(async () => {
  timeline = join(await mkdtemp(join(tmpdir(), "yiem-timeline-")), "timeline.txt");
  await writeFile(timeline, "");
  return { workers: 3, model: { respond }, env: { YIEM_TEST_TIMELINE: timeline } };
});

type Mark = { kind: "start" | "end"; callId: string; at: number };

async function marksOf(prefix: string): Promise<Mark[]> {
  return (await readFile(timeline, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [kind, callId = "", at = "0"] = line.split(" ");
      return { kind: kind as Mark["kind"], callId, at: Number(at) };
    })
    .filter((mark) => mark.callId.startsWith(prefix));
}

/** The most calls running at one moment (an end at the same millisecond as a start counts first). */
function maxOverlap(marks: Mark[]): number {
  const sorted = [...marks].sort((a, b) => a.at - b.at || (a.kind === "end" ? -1 : 1));
  let running = 0;
  let most = 0;
  for (const mark of sorted) {
    running += mark.kind === "start" ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

async function ask(text: string): Promise<string> {
  const { runId } = await cluster.client.send(text);
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
  return response.content.map((block) => ("text" in block ? block.text : "")).join("");
}

describe("per-tool limits across the cluster", () => {
  it("never runs more than 3 calls of a concurrency-3 tool at once over three workers, and keeps call order", async () => {
    const answer = await ask("limited");
    expect(answer.split(" | ")).toEqual(Array.from({ length: 20 }, (_, i) => `l${i} done`));
    const marks = await marksOf("limited-");
    expect(marks.filter((m) => m.kind === "start")).toHaveLength(20);
    const most = maxOverlap(marks);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2); // the calls did run side by side
    const metrics = await (await fetch(`${cluster.coordinatorUrls[0]}/metrics`)).text();
    expect(metrics).toMatch(/yiem_queue_jobs\{queue="tools-tool\.limitedStep",state="waiting"\}/);
  });

  it("shows each limited tool's waiting and running calls while a batch is held back by its limit", async () => {
    const { runId } = await cluster.client.send("limited");
    let seen = { waiting: 0, running: 0 };
    for (let i = 0; i < 100 && seen.waiting === 0; i++) {
      const load = await cluster.client.limitedToolLoad();
      seen = load.find((l) => l.tool === "limitedStep") ?? seen;
      if (seen.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen.waiting).toBeGreaterThan(0);
    expect(seen.running).toBeLessThanOrEqual(3);
    const cli = await runCli(["workers"], cluster.env);
    expect(cli.stdout).toMatch(/^LIMITED TOOL\s+QUEUE\s+WAITING\s+RUNNING/m);
    expect(cli.stdout).toMatch(/^limitedStep\s+tool\.limitedStep\s+\d+\s+\d+/m);
    expect(cli.stdout).toMatch(/^ratedStep\s+tool\.ratedStep\s+\d+\s+\d+/m);
    await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
  });

  it("starts at most 5 calls per second of a tool limited to 5 per second, over 15 calls", async () => {
    const answer = await ask("rated");
    expect(answer.split(" | ")).toEqual(Array.from({ length: 15 }, (_, i) => `r${i} done`));
    const starts = (await marksOf("rated-"))
      .filter((m) => m.kind === "start")
      .map((m) => m.at)
      .sort((a, b) => a - b);
    expect(starts).toHaveLength(15);
    const first = starts[0] ?? 0;
    // The 6th call waits for the second window, the 11th for the third.
    expect((starts[5] ?? 0) - first).toBeGreaterThanOrEqual(900);
    expect((starts[10] ?? 0) - first).toBeGreaterThanOrEqual(1900);
  });
});
