/**
 * A face that resumes a parked run with a person's decision follows it first: the gateway's
 * subscription to the session's events is acknowledged before the decision is sent, so the
 * resumed run's next model call streams its text as deltas however quick the coordinator. The
 * coordinator here wins every race it could: a proxy in front of the gateway's Redis holds the
 * gateway's subscription to a session's events until the session's run has ended when no call
 * of the session awaits a decision any more (the decision was sent first), and lets it through
 * at once while one still does, or while the cluster does not know the session (a run it
 * starts). A gateway that decided first would read only the stored events, and the answer
 * would come whole. After the approved call, the model answers at once in 3 deltas.
 * (`faces.test.ts` and `aguiFace.test.ts` cover the resumes themselves.)
 */
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import type { UIMessage, UIMessageChunk } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  type HeldResumeSubscription,
  type SubscriptionGateProxy,
  startDecidedFirstGate,
} from "../support/subscriptionGateProxy.js";
import { runKeeping } from "./aguiRuns.js";
import { respondAsFaceModel } from "./faceCluster.js";
import { type GatewayProcess, makeKey, sendChatMessages, startGatewayWithKeys } from "./support.js";

const cluster = useTestCluster({ workers: 1, model: { respond: respondAsFaceModel } });
const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
let gateway: GatewayProcess;
let proxy: SubscriptionGateProxy;
let held: HeldResumeSubscription[];

beforeAll(async () => {
  ({ proxy, held } = await startDecidedFirstGate(cluster.client, cluster.redis.url));
  gateway = await startGatewayWithKeys(cluster.env, [alice], { REDIS_URL: proxy.url });
}, 90_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
  await proxy?.close();
});

/** Runs `agent` (with `params`); its interrupts and the answer's text deltas, in order. */
async function runWithDeltas(agent: HttpAgent, params: Parameters<HttpAgent["runAgent"]>[0] = {}) {
  const run = await runKeeping(agent, params);
  const deltas = run.events.flatMap((e) =>
    e.type === "TEXT_MESSAGE_CONTENT" ? [(e as unknown as { delta: string }).delta] : [],
  );
  return { ...run, deltas };
}

beforeEach(() => {
  held.length = 0;
});

describe("a face streams the run a decision resumes as its deltas, the coordinator quicker than it", () => {
  it("AG-UI resume: the answer after the approved call as the model's 3 deltas, the session followed before the decision was sent", async () => {
    const threadId = randomUUID();
    const agent = new HttpAgent({
      url: `${gateway.url}/v1/agui`,
      headers: { authorization: `Bearer ${alice.secret}` },
      threadId,
      initialMessages: [{ id: `user-${randomUUID()}`, role: "user", content: "approve r1" }],
    });
    const parked = await runWithDeltas(agent);
    const [interrupt] = parked.interrupts;
    expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "call-r1" });

    const resumed = await runWithDeltas(agent, {
      resume: [
        { interruptId: interrupt?.id ?? "", status: "resolved", payload: { approved: true } },
      ],
    });
    expect(resumed.result).toMatch(/^done: /);
    expect(resumed.deltas).toHaveLength(3);
    expect(resumed.deltas.join("")).toBe(resumed.result);
    expect(held).toEqual([
      { sessionId: threadId, decidedFirst: false },
      { sessionId: threadId, decidedFirst: false },
    ]);
  }, 60_000);

  it("AI SDK chat approval response: the answer after the approved call as the model's 3 text deltas, the session followed before the decision was sent", async () => {
    const chatId = randomUUID();
    const question: UIMessage = {
      id: `user-${randomUUID()}`,
      role: "user",
      parts: [{ type: "text", text: "approve c1" }],
    };
    const parked = await chatChunks(chatId, [question]);
    const messageId = parked.flatMap((c) => (c.type === "start" ? [c.messageId] : []))[0] ?? "";
    expect(parked).toContainEqual(
      expect.objectContaining({ type: "tool-approval-request", toolCallId: "call-c1" }),
    );
    const responded: UIMessage = {
      id: messageId,
      role: "assistant",
      parts: [
        {
          type: "tool-ledgerApproval",
          toolCallId: "call-c1",
          state: "approval-responded",
          input: { label: "c1" },
          approval: { id: "call-c1", approved: true },
        },
      ],
    };
    const resumed = await chatChunks(chatId, [question, responded]);
    const deltas = resumed.flatMap((c) => (c.type === "text-delta" ? [c.delta] : []));
    expect(deltas).toHaveLength(3);
    expect(deltas.join("")).toMatch(/^done: /);
    expect(held).toEqual([
      { sessionId: chatId, decidedFirst: false },
      { sessionId: chatId, decidedFirst: false },
    ]);
  }, 60_000);
});

/** Sends `messages` as `useChat` does (`DefaultChatTransport`): the answer's chunks, in order. */
async function chatChunks(chatId: string, messages: UIMessage[]): Promise<UIMessageChunk[]> {
  const stream = await sendChatMessages(gateway.url, alice.secret, chatId, messages);
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}
