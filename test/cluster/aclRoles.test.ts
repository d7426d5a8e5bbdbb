/**
 * The four Redis roles of docs/SECURITY.md as real ACL users of a real `redis-server`, with
 * the lines the doc gives, each running what it is for: the coordinator and a tool worker as
 * processes, the client and the approver as the CLI and `YiemClient`. Each does its part and
 * is refused (NOPERM, or a failed job) the rest; what a client can still do to other clients'
 * work, the doc's trust model, is shown too.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type BusEvent, YiemClient } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest, TestProcess } from "@yiem/testing";
import { Job, Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AclRole, documentedAclLine, urlAs } from "../support/aclRoles.js";
import { runCli, startCli } from "../support/cliProcess.js";
import { useLedgerCluster } from "../support/faults.js";

const ROLES: AclRole[] = ["coordinator", "worker", "client", "approver"];

const PASSWORDS: Record<AclRole, string> = {
  coordinator: "coordinator-pass-41a",
  worker: "worker-pass-52b",
  client: "client-pass-63c",
  approver: "approver-pass-74d",
  gateway: "gateway-pass-85e", // its line is run by test/gateway/gateway.test.ts
};

type Wire = { role: string; content: unknown };

/**
 * The tool each scenario calls, by the user message's first word ("slow": no tool, an answer
 * after 2 s; "hang": the same after 30 s, for a run that must still be open when a CLI process,
 * slow to start under load, aborts it).
 */
const TOOLS: Record<string, string> = { plain: "ledgerRemote", one: "ledgerApproval" };

/** `<scenario> <label>`: one call `<label>-1` of the scenario's tool, then `final <label>: <results>`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const [scenario = "", label = "x"] = String(lastUser?.content ?? "").split(" ");
  if (scenario === "slow") return { kind: "text", text: `final ${label}: slow`, delayMs: 2000 };
  if (scenario === "hang") return { kind: "text", text: `final ${label}: slow`, delayMs: 30_000 };
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: `final ${label}: ${results.join(" | ")}` };
  }
  const name = TOOLS[scenario] ?? "ledgerRemote";
  return {
    kind: "toolCalls",
    calls: [{ id: `${label}-1`, name, arguments: { label: `${label}-1`, ms: 50 } }],
  };
}

let serverUrl = "";

const { cluster, ledger } = useLedgerCluster({
  workers: 0, // started below, as the worker user
  model: { respond },
  redis: {
    privateServer: true,
    requirePass: "admin-pass-85e",
    aclLines: ROLES.map((role) => documentedAclLine(role, PASSWORDS[role])),
  },
  redisUrl: (redis) => {
    serverUrl = redis.url;
    return as("coordinator"); // the coordinator process runs as its role
  },
});

/** The Redis URL of `role`'s ACL user. */
function as(role: AclRole): string {
  return urlAs(serverUrl, role, PASSWORDS[role]);
}

/** The environment of a `yiem` run as `role`. */
function cliAs(role: AclRole): Record<string, string> {
  return { ...cluster.env, REDIS_URL: as(role) };
}

let client: YiemClient;
let approver: YiemClient;
let workerOfRole: TestProcess;
const opened: Array<{ close(): unknown }> = [];

beforeAll(async () => {
  workerOfRole = await cluster.addWorkerWith({ REDIS_URL: as("worker") });
  client = new YiemClient({ redis: as("client"), prefix: cluster.redis.prefix });
  approver = new YiemClient({ redis: as("approver"), prefix: cluster.redis.prefix });
});

afterAll(async () => {
  await Promise.all([client.close(), approver.close(), ...opened.map((o) => o.close())]);
});

/** A plain ioredis connection as `role` (closed after the file). */
function redisAs(role: AclRole): Redis {
  const redis = new Redis(as(role), { maxRetriesPerRequest: null });
  opened.push({ close: () => redis.disconnect() });
  return redis;
}

/** A plain BullMQ queue of this cluster as `role` (closed after the file). */
function queueAs(role: AclRole, name: "coordinator" | "decisions"): Queue {
  const queue = new Queue(name, {
    connection: redisAs(role),
    prefix: `${cluster.redis.prefix}:bull`,
  });
  queue.on("error", () => undefined); // a refused metadata write when it opens
  opened.unshift(queue); // closed before its connection
  return queue;
}

/** Sends `text` as the client to a new session and waits until its call awaits approval. */
async function sendAndWaitForApproval(text: string) {
  const sessionId = randomUUID();
  const requested = (async () => {
    for await (const event of client.events(sessionId, { fromStart: true })) {
      if (event.type === "toolApprovalRequested") return event as BusEvent;
    }
  })();
  const { runId } = await client.send(text, { sessionId });
  await requested;
  return { sessionId, runId };
}

function textOf(response: { content: Array<{ type: string; text?: string }> }): string {
  return response.content.map((block) => block.text ?? "").join("");
}

const key = (suffix: string) => `${cluster.redis.prefix}:${suffix}`;

describe("the Redis roles of docs/SECURITY.md, as real ACL users", () => {
  it("the client sends, watches and aborts with the CLI; the coordinator and the worker run the call as theirs", async () => {
    const sent = await runCli(["send", "plain p1"], cliAs("client"));
    expect(sent.stderr).toBe("");
    expect(sent.stdout).toContain("final p1: p1-1 recorded");
    expect(sent.code).toBe(0);
    const sessionId = /^session (\S+)/m.exec(sent.stdout)?.[1] ?? "";
    expect((await ledger.countsByCall()).get("p1-1")).toBe(1); // run by the worker user
    // It recorded the call's finished marker and announced its end on the tool-ends channel.
    expect(workerOfRole.lines.filter((l) => /could not (record|announce)/.test(l))).toEqual([]);

    const watch = startCli(["watch", sessionId, "--from-start"], cliAs("client"));
    const shown = watch.waitFor(/final p1: p1-1 recorded/).then(() => undefined);
    const endedFirst = await Promise.race([shown, watch.done]);
    expect(endedFirst?.stderr ?? "").toBe(""); // it did not stop before showing the run
    watch.interrupt();
    const watched = await watch.done;
    expect(watched.stderr).toBe("");
    expect(watched.stdout).toContain(`watching session ${sessionId}`);
    expect(watched.code).toBe(130);

    const aborted = await runCli(["abort", sessionId], cliAs("client"));
    expect(aborted.stderr).toBe("");
    expect(aborted.stdout).toContain(`Session ${sessionId} has no open run: nothing to abort.`);
    expect(aborted.code).toBe(0);
    expect((await runCli(["workers"], cliAs("client"))).code).toBe(0);
  });

  it("the client records the abort of an open run, and may write no other session state", async () => {
    const sessionId = randomUUID();
    const started = (async () => {
      for await (const event of client.events(sessionId, { fromStart: true }))
        if (event.type === "turnStart") return;
    })();
    const { runId } = await client.send("hang r1", { sessionId });
    await started; // the run is open, its model call under way
    const aborted = await runCli(["abort", sessionId], cliAs("client"));
    expect(aborted.stderr).toBe("");
    expect(aborted.stdout).toContain(`Abort sent to session ${sessionId}: its open run ${runId}`);
    expect(aborted.code).toBe(0);
    const response = await client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    const asClient = redisAs("client");
    const session = key(`s:{${sessionId}}`);
    await expect(asClient.hset(`${session}:run`, "aborted", "1")).rejects.toThrow(/NOPERM/);
    await expect(asClient.rpush(`${session}:messages`, "{}")).rejects.toThrow(/NOPERM/);
    await expect(asClient.set(`${session}:lease`, "mine")).rejects.toThrow(/NOPERM/);
    // It reads the session's current agent, and cannot hand the session to another.
    expect(await client.sessionAgent(sessionId)).toBe("default");
    await expect(asClient.set(`${session}:agent`, "admin")).rejects.toThrow(/NOPERM/);
  });

  it("the client can neither list approvals nor decide; the approver lists and decides, and the call runs once", async () => {
    const { sessionId, runId } = await sendAndWaitForApproval("one a1");
    await expect(client.pendingApprovals()).rejects.toThrow(/NOPERM/);
    await expect(client.pendingApprovals(sessionId)).rejects.toThrow(/NOPERM/);
    const forged = { by: "alice's security lead" };
    await expect(client.approve(sessionId, "a1-1", forged)).rejects.toThrow(/NOPERM/);
    const pendingAsClient = await runCli(["pending"], cliAs("client"));
    expect(pendingAsClient.code).toBe(2);
    expect(pendingAsClient.stderr).toMatch(
      /^yiem: Redis at .* refused this user: NOPERM .*approver role/,
    );
    const approveAsClient = await runCli(["approve", sessionId, "a1-1"], cliAs("client"));
    expect(approveAsClient.code).toBe(2);
    expect(approveAsClient.stderr).toContain("NOPERM");
    // Plain BullMQ as the client: the decisions queue is refused, the coordinator queue fails it.
    const decision = { decision: { sessionId, toolCallId: "a1-1", approved: true, ...forged } };
    await expect(queueAs("client", "decisions").add("decide", decision)).rejects.toThrow(/NOPERM/);
    // The reader starts before the job goes in: a failure it missed would read as a timeout.
    const events = new QueueEvents("coordinator", {
      connection: redisAs("client"),
      prefix: `${cluster.redis.prefix}:bull`,
      lastEventId: "0-0",
    });
    opened.unshift(events);
    await events.waitUntilReady();
    const onRequests = await queueAs("client", "coordinator").add("decide", decision);
    await expect(onRequests.waitUntilFinished(events, 10_000)).rejects.toThrow(
      /^invalid request: decision: decisions are not taken on the coordinator queue/,
    );
    expect((await ledger.countsByCall()).get("a1-1")).toBeUndefined();

    const pending = await runCli(["pending"], cliAs("approver"));
    expect(pending.stdout).toContain(`${sessionId}  a1-1  ledgerApproval`);
    const approved = await runCli(["approve", sessionId, "a1-1", "--by", "ana"], cliAs("approver"));
    expect(approved.stderr).toBe("");
    expect(approved.stdout).toContain(`Approved call a1-1 of session ${sessionId}`);
    expect(approved.code).toBe(0);
    const response = await client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final a1: a1-1 recorded");
    expect((await ledger.countsByCall()).get("a1-1")).toBe(1);
    // The approver decides only: it may not submit requests nor read transcripts.
    await expect(approver.send("hello")).rejects.toThrow(/NOPERM/);
    await expect(approver.messages(sessionId)).rejects.toThrow(/NOPERM/);
  });

  it("the worker touches only the tool queues and its markers: no requests, no decisions, no session data", async () => {
    const sessionId = randomUUID();
    const { runId } = await client.send("plain w1", { sessionId });
    await client.waitForResponse(runId, { timeoutMs: 20_000 });
    await expect(queueAs("worker", "coordinator").add("ask", { input: "hi" })).rejects.toThrow(
      /NOPERM/,
    );
    const decision = { decision: { sessionId, toolCallId: "w1-1", approved: true } };
    await expect(queueAs("worker", "decisions").add("decide", decision)).rejects.toThrow(/NOPERM/);
    const worker = redisAs("worker");
    const session = key(`s:{${sessionId}}`);
    for (const read of [
      () => worker.lrange(`${session}:messages`, 0, -1),
      () => worker.hgetall(`${session}:inputs`),
      () => worker.get(`${session}:response:${runId}`),
      () => worker.hgetall(`${session}:approvals`),
      () => worker.zrange(key("approvalsPending"), 0, -1),
      () => worker.hgetall(key(`bull:coordinator:${runId}`)),
    ]) {
      await expect(read()).rejects.toThrow(/NOPERM/);
    }
  });

  it("no role may list keys (SCAN, KEYS, RANDOMKEY)", async () => {
    for (const role of ROLES) {
      const redis = redisAs(role);
      await expect(redis.scan("0", "MATCH", "*")).rejects.toThrow(/NOPERM/);
      await expect(redis.keys("*")).rejects.toThrow(/NOPERM/);
      await expect(redis.randomkey()).rejects.toThrow(/NOPERM/);
    }
  });

  it("the trust model: a client can pause the queue and forge another client's answer, which YiemClient does not believe", async () => {
    const requests = queueAs("client", "coordinator");
    await requests.pause();
    expect(await requests.isPaused()).toBe(true);
    await requests.resume();

    const victim = new YiemClient({ redis: as("client"), prefix: cluster.redis.prefix });
    opened.push(victim);
    const { runId } = await victim.send("slow f1");
    while ((await requests.getJobState(runId)) !== "active") await sleep(20);
    const token = await redisAs("client").get(key(`bull:coordinator:${runId}:lock`));
    const job = await Job.fromId(requests, runId);
    await job?.moveToCompleted({ forged: true }, token ?? "", false);
    expect((await Job.fromId(requests, runId))?.returnvalue).toEqual({ forged: true });
    const response = await victim.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(textOf(response)).toBe("final f1: slow"); // read from the session, not the job
  });
});
