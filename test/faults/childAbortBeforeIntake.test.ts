/**
 * Aborting a tree whose child run no coordinator has taken in yet: the parent's batch called
 * a child agent and parked, but the child's request still waits on the coordinator queue
 * (paused with plain BullMQ, so no coordinator can take it in). The root is aborted, by a
 * live coordinator that carries the abort down, or while every coordinator is dead; once the
 * child's request is taken in, the child ends aborted without its model being called, and
 * the root ends aborted.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeLeadAndHelperYaml } from "../support/agentsYaml.js";
import { useLedgerCluster, waitUntilSessionUnheld } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Message = { role: string; content: unknown };

/** A lead's first model call waits at its gate (by input) until the test opens it. */
interface Gate {
  asked: Promise<void>;
  markAsked: () => void;
  open: () => void;
  opened: Promise<void>;
}
const gates = new Map<string, Gate>();

function gateFor(input: string): Gate {
  let gate = gates.get(input);
  if (gate) return gate;
  let markAsked: () => void = () => undefined;
  let open: () => void = () => undefined;
  const asked = new Promise<void>((resolve) => {
    markAsked = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  gate = { asked, markAsked, open, opened };
  gates.set(input, gate);
  return gate;
}

function lastUserText(messages: Message[]): string {
  return String(messages.findLast((m) => m.role === "user")?.content ?? "");
}

async function respond(request: ScriptedRequest): Promise<ScriptedReply> {
  const messages = (request.body.messages ?? []) as Message[];
  const model = String(request.body.model);
  const input = lastUserText(messages);
  if (model !== "lead-model") return { kind: "text", text: `${model}: ${input}` };
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "lead: done" };
  const gate = gateFor(input);
  gate.markAsked();
  await gate.opened;
  return {
    kind: "toolCalls",
    calls: [{ name: "agent__helper", arguments: { input: `help-${input}` } }],
  };
}

const { cluster } = useLedgerCluster({
  workers: 1,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: writeLeadAndHelperYaml(["ledgerRemote"]) },
});

const plain = usePlainCoordinatorQueue(cluster);

/** Polls `read` every 50 ms until `done` holds (up to 20 s), and returns what it read last. */
async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (const until = Date.now() + 20_000; !done(value) && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

/**
 * Sends `tag` to the lead with the coordinator queue paused once the lead's model is asked:
 * the lead calls the helper, whose request then waits on the paused queue, and parks.
 * Returns the root's session and run, and the helper's session.
 */
async function parkWithChildUntaken(tag: string) {
  const sessionId = randomUUID();
  const gate = gateFor(tag);
  const { runId } = await cluster.client.send(tag, { sessionId, agent: "lead" });
  await gate.asked;
  await plain.queue.pause();
  gate.open();
  const [child] = await pollUntil(
    () => cluster.client.children(sessionId),
    (c) => c.length > 0,
  );
  const childSessionId = child?.sessionId ?? "";
  await waitUntilSessionUnheld(cluster.redisTarget, cluster.redis.prefix, sessionId);
  const job = await pollUntil(
    () => plain.queue.getJob(`agent-${childSessionId}`),
    (j) => j !== undefined,
  );
  expect(["waiting", "paused"]).toContain(await job?.getState());
  return { sessionId, runId, childSessionId };
}

/** Lets the child's request be taken in, and checks it ended aborted without asking its model. */
async function expectChildAbortedUnasked(rootSessionId: string, childSessionId: string) {
  await plain.queue.resume();
  const job = await plain.queue.getJob(`agent-${childSessionId}`);
  const result = (await job?.waitUntilFinished(plain.events, 30_000)) as {
    response: { stopReason: string };
    usage: { modelCalls: number; toolCalls: number };
  };
  expect(result.response.stopReason).toBe("aborted");
  expect(result.usage).toMatchObject({ modelCalls: 0, toolCalls: 0 });
  const asked = cluster.model.requests.filter((r) => r.body.model === "helper-model");
  expect(asked).toHaveLength(0);
  const [entry] = await pollUntil(
    () => cluster.client.children(rootSessionId),
    (c) => c[0]?.status !== "running",
  );
  expect(entry).toMatchObject({ sessionId: childSessionId, status: "aborted" });
}

describe("faults: the root is aborted while its child's request waits untaken", () => {
  it("ends the child aborted, unasked, when a live coordinator carried the root's abort down", async () => {
    const tag = `live-${randomUUID().slice(0, 8)}`;
    const { sessionId, runId, childSessionId } = await parkWithChildUntaken(tag);
    expect(await cluster.client.abort(sessionId)).toMatchObject({ kind: "recorded" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("aborted");
    await expectChildAbortedUnasked(sessionId, childSessionId);
  });

  it("ends the child and the root aborted when every coordinator was dead as the root was aborted", async () => {
    const tag = `dead-${randomUUID().slice(0, 8)}`;
    const { sessionId, runId, childSessionId } = await parkWithChildUntaken(tag);
    const alive = [...cluster.coordinators];
    for (const coordinator of alive) coordinator.signal("SIGKILL");
    await Promise.all(alive.map((coordinator) => coordinator.exited));
    expect(await cluster.client.abort(sessionId)).toMatchObject({ kind: "recorded" });
    await cluster.addCoordinator();
    await expectChildAbortedUnasked(sessionId, childSessionId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("aborted");
  }, 60_000);
});
