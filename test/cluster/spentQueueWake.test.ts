/**
 * A tool call whose queue's wake-up is spent by a client that never takes it (as a worker
 * killed or stopped while blocked on the queue's marker spends it) is still taken by a live
 * worker soon after its add: the coordinator marks the queue again when the call is not taken
 * by then. Without that, the live worker sleeps until its own wait for a marker runs out
 * (BullMQ's `drainDelay`, 5 s) or another add wakes it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/** A user message asks `echoText` once; the tool's result is then the answer. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `echoed ${String(last.content)}` };
  const text = String(last?.content ?? "");
  return { kind: "toolCalls", calls: [{ name: "echoText", arguments: { text } }] };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

describe("a tool queue's wake-up spent by a client that never takes", () => {
  it("has the live worker take the call well before its wait for a marker runs out", async () => {
    const thief = cluster.connectRedis();
    try {
      const marker = `${cluster.redis.prefix}:bull:tools-default:marker`;
      // Blocked on the marker as a dying worker is: it pops a wake-up and never takes a job.
      let spent = false;
      void thief.bzpopmin(marker, 0).then(() => {
        spent = true;
      });
      await sleep(100);
      // Redis hands a wake-up to the client blocked longest: the worker, blocked since it
      // started, takes the first call and blocks again behind the thief, which gets the next.
      for (let i = 0; i < 5 && !spent; i++) {
        const sent = await cluster.client.send(`call-${i}`);
        const answer = await cluster.client.waitForResponse(sent.requestId, {
          timeoutMs: 2500, // the worker's own wait runs 5 s
        });
        expect(answer.content).toEqual([{ type: "text", text: `echoed call-${i}` }]);
      }
      expect(spent).toBe(true);
    } finally {
      thief.disconnect();
    }
  });
});
