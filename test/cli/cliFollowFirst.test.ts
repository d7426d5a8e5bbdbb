/**
 * `yiem send` follows a run before it sends it: its subscription to the session's events is
 * acknowledged before the request is queued, so the first model call's text streams as its
 * deltas however quick the coordinator. A proxy in front of the CLI's Redis holds the CLI's
 * subscription to a session's events until that session's run has ended, unless the cluster
 * does not know the session yet (nothing was sent: the CLI follows first), when it lets it
 * through at once. A CLI that sent first would then read only the stored events, and print
 * the text whole. The model streams its text at once, with no pause between deltas.
 */
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import {
  type HeldSubscription,
  type SubscriptionGateProxy,
  startQueuedFirstGate,
} from "../support/subscriptionGateProxy.js";

/** The model: `<x>` answers `hi <x>` at once, in deltas of two characters. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.filter((m) => m.role === "user").at(-1);
  const text = `hi ${String(last?.content ?? "")}`;
  return { kind: "text", text, textChunks: Math.ceil(text.length / 2) };
}

const cluster = useTestCluster({ workers: 0, model: { respond } });
let proxy: SubscriptionGateProxy;
let held: HeldSubscription[];

beforeAll(async () => {
  ({ proxy, held } = await startQueuedFirstGate(cluster.client, cluster.redis.url));
});

afterAll(async () => {
  await proxy?.close();
});

describe("yiem send, the coordinator quicker than the CLI", () => {
  it("prints the first model call's text as its deltas (--json), the session followed before its request was sent", async () => {
    const run = await runCli(["send", "--json", "amy"], { ...cluster.env, REDIS_URL: proxy.url });
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; delta?: string; sessionId?: string });
    const deltas = lines.flatMap((line) => (line.type === "messageUpdate" ? [line.delta] : []));
    expect(deltas).toEqual(["hi", " a", "my"]);
    expect(lines.at(-1)?.type).toBe("response");
    expect(held).toEqual([{ sessionId: lines[0]?.sessionId, queuedFirst: false }]);
  });
});
