/**
 * A face that starts a run follows it first: the gateway's subscription to the run's session
 * events is acknowledged before the run is queued, so the first model call's text streams as
 * its deltas however quick the coordinator. The coordinator here wins every race it could: a
 * proxy in front of the gateway's Redis holds the gateway's subscription to a session's events
 * until that session's run has ended, unless the cluster does not know the session yet
 * (nothing was queued: the gateway follows first), when it lets it through at once. A gateway
 * that queued the run first would then read only the stored events, and the text would come
 * whole. The model streams its text at once, with no pause between deltas.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  type HeldSubscription,
  type SubscriptionGateProxy,
  startQueuedFirstGate,
} from "../support/subscriptionGateProxy.js";
import {
  type GatewayProcess,
  makeKey,
  openaiClient,
  startGatewayWithKeys,
  textOf,
  type Wire,
} from "./support.js";

/** The model: `<x>` answers `hi <x>` at once, in deltas of two characters. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const last = messages.filter((m) => m.role === "user").at(-1);
  const text = `hi ${textOf(last?.content)}`;
  return { kind: "text", text, textChunks: Math.ceil(text.length / 2) };
}

const cluster = useTestCluster({ workers: 0, model: { respond } });
const alice = makeKey("alice", { scopes: ["submit", "read"] });
let gateway: GatewayProcess;
let proxy: SubscriptionGateProxy;
let held: HeldSubscription[];

beforeAll(async () => {
  ({ proxy, held } = await startQueuedFirstGate(cluster.client, cluster.redis.url));
  gateway = await startGatewayWithKeys(cluster.env, [alice], { REDIS_URL: proxy.url });
}, 90_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
  await proxy?.close();
});

beforeEach(() => {
  held.length = 0;
});

const openai = () => openaiClient(gateway.url, alice.secret, 30_000);

describe("a face streams the first model call of a run it starts as its deltas, the coordinator quicker than it", () => {
  it("Responses (stream: true): the text as the model's deltas, in order, and the session followed before its run was queued", async () => {
    const stream = await openai().responses.create({
      model: "default",
      input: "zed",
      stream: true,
    });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const deltas = events.flatMap((e) =>
      e.type === "response.output_text.delta" ? [e.delta] : [],
    );
    expect(deltas).toEqual(["hi", " z", "ed"]);
    expect(events.at(-1)?.type).toBe("response.completed");
    const numbers = events.map((event) => event.sequence_number);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(held).toEqual([{ sessionId: expect.any(String), queuedFirst: false }]);
  });

  it("chat completions (stream: true): the text as the model's deltas, in order, and the session followed before its run was queued", async () => {
    const sessionId = randomUUID();
    const stream = await openai().chat.completions.create(
      { model: "default", messages: [{ role: "user", content: "amy" }], stream: true },
      { headers: { "X-Yiem-Session": sessionId } },
    );
    const deltas: string[] = [];
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (content) deltas.push(content);
    }
    expect(deltas).toEqual(["hi", " a", "my"]);
    expect(held).toEqual([{ sessionId, queuedFirst: false }]);
  });
});
