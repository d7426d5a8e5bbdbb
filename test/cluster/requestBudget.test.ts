/**
 * A request's own `budget` (job data), as real processes: it lowers the run's budget and
 * never raises the coordinator's (`YIEM_BUDGET`), a bad one fails its job once naming the
 * field, and it holds for the coordinator that resumes the run after its holder is SIGKILLed.
 */
import { randomUUID } from "node:crypto";
import type { CoordinatorJobResult } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { leaseHolderPid } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Wire = { role: string; content: unknown };

/** How many model calls each run made, by the label of its input. */
const modelCalls = new Map<string, number>();

/** `budget <label> <turns> <ms>`: `turns` turns of one `sleepFor` call of `ms`, then a text answer. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const [, label = "x", turns = "1", ms = "1"] = String(lastUser?.content ?? "").split(" ");
  const turn = messages
    .slice(messages.lastIndexOf(lastUser as Wire))
    .filter((m) => m.role === "assistant").length;
  modelCalls.set(label, (modelCalls.get(label) ?? 0) + 1);
  if (turn >= Number(turns)) return { kind: "text", text: `done ${label}` };
  const id = `${label}-${turn}`;
  return {
    kind: "toolCalls",
    calls: [{ id, name: "sleepFor", arguments: { ms: Number(ms), label: id } }],
  };
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  env: { YIEM_BUDGET: JSON.stringify({ maxModelCalls: 3 }) },
});
const plain = usePlainCoordinatorQueue(cluster);

/** Adds a request as any BullMQ producer does and waits for it to finish or fail. */
async function ask(data: Record<string, unknown>) {
  const job = await plain.queue.add("ask", data, { attempts: 3 });
  const settled = await job.waitUntilFinished(plain.events, 20_000).then(
    (result: CoordinatorJobResult) => ({ result, error: undefined }),
    (error: Error) => ({ result: undefined, error }),
  );
  return { job: await plain.queue.getJob(job.id ?? ""), ...settled };
}

describe("a request's own budget", () => {
  it("stops a plain BullMQ request with budget maxModelCalls 1 after its first model call", async () => {
    const { result, error } = await ask({
      input: "budget one 1 1",
      budget: { maxModelCalls: 1 },
    });
    expect(error).toBeUndefined();
    expect(result?.response.stopReason).toBe("budget");
    expect(result?.response.content).toEqual([
      { type: "text", text: expect.stringContaining("maxModelCalls") },
    ]);
    expect(result?.usage).toMatchObject({ modelCalls: 1, toolCalls: 1 });
    expect(modelCalls.get("one")).toBe(1);
  });

  it("does not raise the coordinator's YIEM_BUDGET when it sets a higher limit", async () => {
    const { result } = await ask({ input: "budget high 5 1", budget: { maxModelCalls: 10 } });
    expect(result?.response.stopReason).toBe("budget");
    expect(result?.usage).toMatchObject({ modelCalls: 3 });
    expect(modelCalls.get("high")).toBe(3);
  });

  it("answers in full when the run stays under it", async () => {
    const { result } = await ask({ input: "budget under 1 1", budget: { maxToolCalls: 5 } });
    expect(result?.response.stopReason).toBe("stop");
    expect(result?.response.content).toEqual([{ type: "text", text: "done under" }]);
  });

  it("fails the job once, naming the field, for a bad or unknown limit", async () => {
    const negative = await ask({ input: "budget bad 1 1", budget: { maxTokens: -1 } });
    expect(negative.error?.message).toBe(
      "invalid request: budget.maxTokens: must be a number of zero or more",
    );
    expect(negative.job?.attemptsMade).toBe(1);
    const unknown = await ask({ input: "budget bad 1 1", budget: { maxSteps: 2 } });
    expect(unknown.error?.message).toBe(
      "invalid request: budget.maxSteps: unknown limit (known: maxTokens, maxCostUsd, maxToolCalls, maxModelCalls)",
    );
    expect(unknown.job?.attemptsMade).toBe(1);
    const notObject = await ask({ input: "budget bad 1 1", budget: 5 });
    expect(notObject.error?.message).toBe("invalid request: budget: must be an object");
    expect(modelCalls.get("bad")).toBeUndefined();
  });

  it("lowers the open run's budget when an input with a lower one joins it", async () => {
    const sessionId = randomUUID();
    const joined = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecStart" && event.toolCallId === "join-0") break;
      }
      return cluster.client.send("budget joiner 1 1", { sessionId, budget: { maxModelCalls: 2 } });
    })();
    const first = await cluster.client.send("budget join 5 800", { sessionId });
    const second = await joined;
    const answer = await cluster.client.waitForAnswer(first.runId, { timeoutMs: 20_000 });
    expect(answer.response.stopReason).toBe("budget");
    expect(answer.usage).toMatchObject({ modelCalls: 2 });
    const joinedAnswer = await cluster.client.waitForAnswer(second.runId, { timeoutMs: 20_000 });
    expect(joinedAnswer).toEqual(answer);
  });

  it("holds for the coordinator that resumes the run after its holder is SIGKILLed mid-run", async () => {
    const sessionId = randomUUID();
    const killed = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecStart" && event.toolCallId === "crash-0") break;
      }
      const pid = await leaseHolderPid(cluster.redis.url, cluster.redis.prefix, sessionId);
      const holder = cluster.coordinators.find((c) => c.pid === pid);
      holder?.signal("SIGKILL");
      await holder?.exited;
      await cluster.addCoordinator();
      return holder !== undefined;
    })();
    const { runId } = await cluster.client.send("budget crash 5 1500", {
      sessionId,
      budget: { maxModelCalls: 2 },
    });
    expect(await killed).toBe(true);
    const { response, usage } = await cluster.client.waitForAnswer(runId, { timeoutMs: 45_000 });
    expect(response.stopReason).toBe("budget");
    expect(usage).toMatchObject({ modelCalls: 2 });
    expect(modelCalls.get("crash")).toBe(2);
  }, 60_000);
});

describe("yiem send --budget", () => {
  it("sends the request's budget, and refuses a bad one naming the limit", async () => {
    const budget = JSON.stringify({ maxModelCalls: 1 });
    const sent = await runCli(["send", "--budget", budget, "budget cli 1 1"], cluster.env);
    expect(sent.stdout).toContain("its budget was reached: maxModelCalls");
    expect(modelCalls.get("cli")).toBe(1);
    const bad = await runCli(["send", "--budget", '{"maxTokens":-1}', "hi"], cluster.env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("yiem: budget.maxTokens: must be a number of zero or more");
  });
});
