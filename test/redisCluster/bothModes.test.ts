import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type BusEvent, YiemClient } from "@yiem/core";
import {
  redisSupportsCluster,
  type ScriptedReply,
  type ScriptedRequest,
  type TestProcess,
} from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { faultModel } from "../faults/scriptedFaultModel.js";
import { runCli } from "../support/cliProcess.js";
import type { TestCluster } from "../support/cluster.js";
import { leaseHolderPid, useLedgerCluster } from "../support/faults.js";

/**
 * The same scenarios on a single Redis and on a 3+3 Redis Cluster: a parallel batch over two
 * workers, the CLI, a sequential batch, abort, a coordinator SIGKILLed mid-batch and a worker
 * SIGKILLed mid-call, every model call under a shared provider limit; and a tenant's budget per
 * day and the tenant line. Each mode gets its own Redis, processes and ledger.
 */

/** `parallel6`, `sequential`, `abort me`, else the fault model (`<tool> <label> [ms] [count]`). */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const text = String(lastUser?.content ?? "");
  if (messages.at(-1)?.role === "tool" && !text.includes(" ")) {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  if (text === "parallel6") {
    const calls = [0, 1, 2, 3, 4, 5].map((i) => ({
      id: `p${i}`,
      name: "sleepFor",
      arguments: { ms: 600 - i * 100, label: `call${i}`, steps: 2 },
    }));
    return { kind: "toolCalls", calls };
  }
  if (text.startsWith("echo ")) return { kind: "text", text: text.slice(5) };
  if (text.startsWith("slow"))
    return {
      kind: "toolCalls",
      calls: [{ id: "w1", name: "sleepFor", arguments: { ms: 300, label: text, steps: 1 } }],
    };
  if (text === "sequential")
    return { kind: "toolCalls", calls: [{ id: "s1", name: "whereAmI", arguments: {} }] };
  if (text === "abort me")
    return {
      kind: "toolCalls",
      calls: [{ id: "a1", name: "waitForAbort", arguments: { label: "first" } }],
    };
  return faultModel(request);
}

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

/** Every event of a session's run, from its start until its `agentEnd`. */
async function collect(cluster: TestCluster, sessionId: string, runId: string) {
  const events: BusEvent[] = [];
  const stream = cluster.client.events(sessionId, { fromStart: true, untilAgentEnd: true, runId });
  for await (const event of stream) events.push(event);
  return events;
}

/** Sends `text` on a new session and waits until `when` sees one of its events. */
async function sendAndWaitFor(
  cluster: TestCluster,
  text: string,
  when: (event: BusEvent) => boolean,
): Promise<{ sessionId: string; runId: string; event: BusEvent }> {
  const sessionId = randomUUID();
  const seen = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
      if (when(event)) return event;
    }
    throw new Error("the event stream ended first");
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  return { sessionId, runId, event: await seen };
}

/** The worker process that published `event` (by its worker id). */
function workerOf(cluster: TestCluster, event: BusEvent): TestProcess {
  const worker = cluster.workers.find((w) =>
    w.lines.some((line) => line.includes(`"workerId":"${event.workerId}"`)),
  );
  if (!worker) throw new Error(`no worker process for ${event.workerId}`);
  return worker;
}

/** Runs `use` with a client of its own (not the one that sent). */
async function withClient<T>(cluster: TestCluster, use: (client: YiemClient) => Promise<T>) {
  const client = new YiemClient({ redis: cluster.redisTarget, prefix: cluster.redis.prefix });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** Removes a finished request job with plain BullMQ, as its retention would after an hour. */
async function removeRequestJob(cluster: TestCluster, runId: string, onCluster: boolean) {
  const connection = cluster.connectRedis();
  const name = onCluster ? "{coordinator}" : "coordinator";
  const queue = new Queue(name, { connection, prefix: `${cluster.redis.prefix}:bull` });
  try {
    // The answer is stored (and announced) before the coordinator completes the job: a job
    // still active is locked, and `remove` leaves it.
    await expect.poll(() => queue.getJobState(runId), { timeout: 10_000 }).toBe("completed");
    expect(await queue.remove(runId)).toBe(1);
    expect(await queue.getJob(runId)).toBeUndefined();
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

const modes = [
  { name: "a single Redis", redisCluster: false },
  { name: "a 3+3 Redis Cluster", redisCluster: true },
];
const clusterSupported = redisSupportsCluster();
if (!clusterSupported) {
  console.warn("skipping the Redis Cluster runs: this redis-server has no cluster support (7+)");
}

describe.each(modes)("on $name", ({ redisCluster }) => {
  const skip = redisCluster && !clusterSupported;
  const { cluster, ledger } = useLedgerCluster({
    workers: 2,
    coordinators: 2,
    redisCluster: redisCluster && !skip,
    model: { respond },
    // Three calls at once per worker and shard (a cluster has 3 shards): the batch of six
    // runs all at once, and only on both workers together.
    env: { WORKER_CONCURRENCY: redisCluster ? "9" : "3" },
    // Every model call goes through a shared limit (wide enough never to make one wait), one
    // tenant may make a single model call a day, and another may run one run at a time.
    coordinatorEnv: {
      YIEM_MODEL_LIMITS: JSON.stringify({
        "scripted-model": { requests: 10_000, tokens: 10_000_000 },
      }),
      YIEM_TENANTS: JSON.stringify({
        capped: { budgetPerDay: { maxModelCalls: 1 } },
        single: { runsAtOnce: 1 },
      }),
    },
  });

  it.skipIf(skip)(
    "admits calls under a shared limit, stops a tenant at its budget per day and lines tenants up",
    async () => {
      const client = new YiemClient({
        redis: cluster.redisTarget,
        prefix: cluster.redis.prefix,
        tenantLine: true,
      });
      const answer = async (text: string, tenant: string) => {
        const { runId } = await client.send(text, { tenant });
        return client.waitForResponse(runId, { timeoutMs: 20_000 });
      };
      try {
        expect(textOf(await answer("echo first", "capped"))).toBe("first");
        expect((await answer("echo second", "capped")).stopReason).toBe("budget");
        expect(textOf(await answer("echo other", "other"))).toBe("other");
        const limits = await runCli(["limits", "--json"], cluster.env);
        expect(limits.code).toBe(0);
        const [state] = JSON.parse(limits.stdout) as [
          { limit: { name: string }; recentRequests: number },
        ];
        expect(state.limit.name).toBe("scripted-model");
        expect(state.recentRequests).toBeGreaterThanOrEqual(2);
      } finally {
        await client.close();
      }
    },
  );

  it.skipIf(skip)("runs a tenant's runs one at a time under its runsAtOnce of 1", async () => {
    const sent = await Promise.all(
      ["slowA", "slowB", "slowC"].map((text) => cluster.client.send(text, { tenant: "single" })),
    );
    const spans = await Promise.all(
      sent.map(async ({ sessionId, runId }) => {
        const events = await collect(cluster, sessionId, runId);
        const at = (type: string) => events.find((e) => e.type === type)?.ts ?? Number.NaN;
        return { start: at("agentStart"), end: at("agentEnd") };
      }),
    );
    spans.sort((a, b) => a.start - b.start);
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]?.start).toBeGreaterThanOrEqual(spans[i - 1]?.end as number);
  });

  it.skipIf(skip)("runs a parallel batch on two workers and keeps call order", async () => {
    const { sessionId, runId } = await cluster.client.send("parallel6");
    const events = await collect(cluster, sessionId, runId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(textOf(response)).toBe([0, 1, 2, 3, 4, 5].map((i) => `call${i} done`).join(" | "));
    const ends = events.flatMap((e) => (e.type === "toolExecEnd" ? [e.toolCallId] : []));
    expect([...ends].sort()).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
    // In parallel: the last call (100 ms) started before the first (600 ms) ended, and ended
    // before it; the 100 ms steps between the others are left to a loaded machine's timing.
    const at = (type: string, id: string) =>
      events.findIndex((e) => e.type === type && "toolCallId" in e && e.toolCallId === id);
    expect(at("toolExecStart", "p5")).toBeLessThan(at("toolExecEnd", "p0"));
    expect(ends.indexOf("p5")).toBeLessThan(ends.indexOf("p0"));
    const workers = new Set(events.flatMap((e) => (e.type === "toolExecEnd" ? [e.workerId] : [])));
    expect([...workers].sort()).toEqual(["worker-1", "worker-2"]);
  });

  it.skipIf(skip)(
    "serves the yiem CLI: send shows the calls and the answer, workers lists both",
    async () => {
      const sent = await runCli(["send", "parallel6"], cluster.env);
      expect(sent.code).toBe(0);
      expect(sent.stdout).toMatch(/✔ sleepFor\(.*"label":"call0".*\) on worker-[12]/);
      expect(sent.stdout).toContain("call0 done | call1 done");
      const workers = await runCli(["workers"], cluster.env);
      expect(workers.code).toBe(0);
      expect(workers.stdout).toMatch(/worker-1[\s\S]*worker-2|worker-2[\s\S]*worker-1/);
    },
  );

  it.skipIf(skip)(
    "lets another client wait for a run: through its job, or told its session once the job is gone",
    async () => {
      const { sessionId, runId } = await cluster.client.send("parallel6");
      const viaJob = await withClient(cluster, (client) =>
        client.waitForResponse(runId, { timeoutMs: 20_000 }),
      );
      expect(textOf(viaJob)).toContain("call0 done");
      await removeRequestJob(cluster, runId, redisCluster);
      const told = await withClient(cluster, (client) =>
        client.waitForResponse(runId, { sessionId, timeoutMs: 5_000 }),
      );
      expect(told).toEqual(viaJob);
    },
  );

  it.skipIf(!redisCluster || skip)(
    "waits for a replica after the session writes of a run",
    async () => {
      const before = (await cluster.redisCluster?.commandCalls("wait")) ?? 0;
      const { runId } = await cluster.client.send("sequential");
      await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
      const waits = ((await cluster.redisCluster?.commandCalls("wait")) ?? 0) - before;
      // input recorded, run opened, inputs drained twice, four messages appended, run closed
      expect(waits).toBeGreaterThanOrEqual(6);
    },
  );

  it.skipIf(skip)("runs a sequential batch in the coordinator's process", async () => {
    const { runId } = await cluster.client.send("sequential");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const pids = cluster.coordinators.map((c) => `pid ${c.pid}`);
    expect(pids).toContain(textOf(response));
  });

  it.skipIf(skip)("aborts a run: the worker's tool sees its signal", async () => {
    const started = await sendAndWaitFor(cluster, "abort me", (e) => e.type === "toolExecUpdate");
    const worker = workerOf(cluster, started.event);
    await cluster.client.abort(started.sessionId);
    const response = await cluster.client.waitForResponse(started.runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    await expect
      .poll(() => readFile(ledger.path, "utf8"), { timeout: 15_000 })
      .toContain(`aborted first ${worker.pid}`);
  });

  it.skipIf(skip)("finishes a batch whose coordinator was SIGKILLed mid-batch", async () => {
    const started = await sendAndWaitFor(
      cluster,
      "ledgerRemote k1 1500 2",
      (e) => e.type === "toolExecUpdate",
    );
    const pid = await leaseHolderPid(cluster.redisTarget, cluster.redis.prefix, started.sessionId);
    const holder = cluster.coordinators.find((c) => c.pid === pid);
    if (!holder) throw new Error(`no coordinator holds ${started.sessionId} (lease pid ${pid})`);
    holder.signal("SIGKILL");
    await holder.exited;
    await cluster.addCoordinator();
    const response = await cluster.client.waitForResponse(started.runId, { timeoutMs: 45_000 });
    expect(textOf(response)).toBe("final k1: k1-1 recorded | k1-2 recorded");
    const counts = await ledger.countsByCall();
    expect([counts.get("k1-1"), counts.get("k1-2")]).toEqual([1, 1]); // remote calls never rerun
  });

  it.skipIf(skip)(
    "retries a call whose worker was SIGKILLed mid-call on the other worker",
    async () => {
      const started = await sendAndWaitFor(
        cluster,
        "ledgerRemote w1 2500",
        (e) => e.type === "toolExecUpdate",
      );
      const worker = workerOf(cluster, started.event);
      worker.signal("SIGKILL");
      const response = await cluster.client.waitForResponse(started.runId, { timeoutMs: 45_000 });
      expect(textOf(response)).toBe("final w1: w1-1 recorded");
      expect((await ledger.countsByCall()).get("w1-1")).toBe(2);
      const results = (await cluster.client.messages(started.sessionId)).filter(
        (m) => m.role === "toolResult",
      );
      expect(results).toHaveLength(1);
      await cluster.addWorker();
    },
  );
});
