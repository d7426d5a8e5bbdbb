import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CoordinatorJobResult, RunUsage } from "@yiem/core";
import {
  logEntries,
  logMessage,
  type ScriptedReply,
  type ScriptedRequest,
  sampleOf,
  scrape,
} from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { leaseHolderPid } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";
import { spawnApp } from "../support/processes.js";

type Wire = { role: string; content: unknown };
type Reported = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/** Every usage block the model sent, by the label of the run's input. */
const reported = new Map<string, Reported[]>();

const PRICE = { input: 2.5, output: 10, cachedInput: 1.25 };
const pricesDir = mkdtempSync(join(tmpdir(), "yiem-prices-"));
const pricesFile = join(pricesDir, "prices.json");
writeFileSync(pricesFile, JSON.stringify({ "scripted-model": PRICE }));

/**
 * `usage <label> <turns> <ms>`: `turns` turns of two parallel `sleepFor` calls of `ms` each,
 * then a text answer; every answer reports a usage of its own (random counts), recorded.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const [, label = "x", turns = "1", ms = "1"] = String(lastUser?.content ?? "").split(" ");
  const turn = messages
    .slice(messages.lastIndexOf(lastUser as Wire))
    .filter((m) => m.role === "assistant").length;
  const usage = {
    prompt_tokens: 100 + Math.floor(Math.random() * 900),
    completion_tokens: 1 + Math.floor(Math.random() * 99),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  reported.set(label, [...(reported.get(label) ?? []), usage]);
  if (turn >= Number(turns)) return { kind: "text", text: `done ${label}`, usage };
  const calls = [1, 2].map((i) => ({
    id: `${label}-${turn}-${i}`,
    name: "sleepFor",
    arguments: { ms: Number(ms), label: `${label}-${turn}-${i}` },
  }));
  return { kind: "toolCalls", calls, usage };
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  env: { YIEM_PRICES: pricesFile },
});
const plain = usePlainCoordinatorQueue(cluster);

/** The usage the run of `label` must report: the sum of what the model sent for it. */
function expectedUsage(label: string, toolCalls: number): Partial<RunUsage> {
  const sent = reported.get(label) ?? [];
  const inputTokens = sent.reduce((sum, u) => sum + u.prompt_tokens, 0);
  const outputTokens = sent.reduce((sum, u) => sum + u.completion_tokens, 0);
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    modelCalls: sent.length,
    toolCalls,
  };
}

function expectedCost(label: string): number {
  const sent = reported.get(label) ?? [];
  return sent.reduce((sum, u) => sum + (u.prompt_tokens * 2.5 + u.completion_tokens * 10) / 1e6, 0);
}

/** The `run finished` line some coordinator logged for `runId`. */
function runFinishedLine(runId: string) {
  return cluster.coordinators
    .flatMap((c) => logEntries(c, "run finished"))
    .find((entry) => entry.runId === runId);
}

describe("usage totals of a run", () => {
  it("adds up what the model reported over three tool turns, with its cost, in the answer, agentEnd and the run finished log", async () => {
    const sessionId = randomUUID();
    const { runId } = await cluster.client.send("usage three 3 1", { sessionId });
    const { response, usage } = await cluster.client.waitForAnswer(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "done three" }]);
    expect(reported.get("three")).toHaveLength(4);
    expect(usage).toMatchObject(expectedUsage("three", 6));
    expect(usage?.costUsd).toBeCloseTo(expectedCost("three"), 9);
    expect(usage?.unpricedModels).toEqual([]);
    const ends = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    }))
      if (event.type === "agentEnd") ends.push(event);
    expect(ends.map((e) => e.usage)).toEqual([usage]);
    await expect.poll(() => runFinishedLine(runId), { timeout: 5000 }).toBeDefined();
    expect(runFinishedLine(runId)?.usage).toEqual(usage);
  });

  it("gives a plain BullMQ producer the usage in the job's return value", async () => {
    const job = await plain.queue.add("ask", { input: "usage plain 1 1" });
    const result = (await job.waitUntilFinished(plain.events, 20_000)) as CoordinatorJobResult;
    expect(result.response.content).toEqual([{ type: "text", text: "done plain" }]);
    expect(result.usage).toMatchObject(expectedUsage("plain", 2));
    expect(result.usage?.costUsd).toBeCloseTo(expectedCost("plain"), 9);
  });

  it("counts every model call's tokens and cost in /metrics by agent and model", async () => {
    const all = [...reported.values()].flat();
    const sum = (key: keyof Reported) => all.reduce((total, u) => total + u[key], 0);
    const scrapes = await Promise.all(
      cluster.coordinatorUrls.map((url) => scrape(`${url}/metrics`)),
    );
    const total = (series: string) =>
      scrapes.reduce((acc, text) => acc + (sampleOf(text, series) ?? 0), 0);
    const labels = 'agent="default",model="scripted-model"';
    expect(total(`yiem_model_calls_total{${labels}}`)).toBe(all.length);
    expect(total(`yiem_llm_tokens_total{${labels},type="input"}`)).toBe(sum("prompt_tokens"));
    expect(total(`yiem_llm_tokens_total{${labels},type="output"}`)).toBe(sum("completion_tokens"));
    const cost = all.reduce(
      (acc, u) => acc + (u.prompt_tokens * 2.5 + u.completion_tokens * 10) / 1e6,
      0,
    );
    expect(total(`yiem_llm_cost_usd_total{${labels}}`)).toBeCloseTo(cost, 9);
  });

  it("keeps counting from where it was when the coordinator holding the run is SIGKILLed while a slow tool runs, and counts nothing twice", async () => {
    const sessionId = randomUUID();
    const killed = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecStart" && event.toolCallId === "crash-1-1") break;
      }
      const pid = await leaseHolderPid(cluster.redis.url, cluster.redis.prefix, sessionId);
      const holder = cluster.coordinators.find((c) => c.pid === pid);
      holder?.signal("SIGKILL");
      await holder?.exited;
      await cluster.addCoordinator();
      return holder !== undefined;
    })();
    const { runId } = await cluster.client.send("usage crash 3 1500", { sessionId });
    expect(await killed).toBe(true);
    const { usage } = await cluster.client.waitForAnswer(runId, { timeoutMs: 45_000 });
    expect(reported.get("crash")).toHaveLength(4); // the answered turns were not asked again
    expect(usage).toMatchObject(expectedUsage("crash", 6));
    expect(usage?.costUsd).toBeCloseTo(expectedCost("crash"), 9);
    await expect.poll(() => runFinishedLine(runId), { timeout: 5000 }).toBeDefined();
    expect(runFinishedLine(runId)).toMatchObject({ resumed: true, usage });
  }, 60_000);
});

describe("YIEM_PRICES", () => {
  it("stops a coordinator at start with the file and the field when a price is not a number", async () => {
    const bad = join(pricesDir, "bad.json");
    writeFileSync(bad, JSON.stringify({ "gpt-4o": { input: "2.5", output: 10 } }));
    const coordinator = spawnApp("apps/coordinator/src/main.ts", {
      ...cluster.env,
      PORT: "39171", // never listened on: the table is refused first
      YIEM_PRICES: bad,
    });
    expect(await coordinator.exited).toBe(1);
    const line = coordinator.lines.find((l) => l.includes("coordinator failed to start")) ?? "";
    expect(line).toContain(`YIEM_PRICES (${bad}): "gpt-4o".input must be a number`);
    expect(coordinator.lines.some(logMessage("coordinator ready"))).toBe(false);
  });
});
