/**
 * The coordinator's `/healthz` is answered by a front door thread, not by the event loop that
 * runs the agent loop: a probe gets an answer while that loop is held, and the answer says
 * whether the loop still turns (503 `stalled` once it has been silent past
 * `YIEM_HEALTH_STALL_MS`, 200 again once it turns). Every other path is passed through to
 * the main thread, so it waits for the loop.
 */
import { fileURLToPath } from "node:url";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const BLOCK_MS = 4000;
const STALL_MS = 1000;

/** The model blocks the coordinator's loop once (`blockLoop` runs in-process), then answers. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "unblocked" };
  return {
    kind: "toolCalls",
    calls: [{ id: "b-1", name: "blockLoop", arguments: { ms: BLOCK_MS } }],
  };
}

const cluster = useTestCluster({
  workers: 0,
  model: { respond },
  coordinatorEnv: {
    YIEM_TOOLS_DIR: fileURLToPath(new URL("../support/loopBlockTools/", import.meta.url)),
    YIEM_HEALTH_STALL_MS: String(STALL_MS),
  },
});

interface Probe {
  status: number;
  body: { status?: string; eventLoopSilentMs?: number };
}

async function probe(url: string): Promise<Probe> {
  const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(BLOCK_MS * 2) });
  return { status: response.status, body: (await response.json()) as Probe["body"] };
}

describe("the coordinator's liveness probe", () => {
  it("answers while the agent loop is held, says stalled past the threshold, and recovers", async () => {
    const url = cluster.coordinatorUrls[0] ?? "";
    expect((await probe(url)).status).toBe(200);
    const sent = await cluster.client.send("block the loop");
    const answer = cluster.client.waitForResponse(sent.runId, { timeoutMs: 60_000 });
    let finished = false;
    void answer.finally(() => {
      finished = true;
    });
    const seen: Probe[] = [];
    while (!finished) {
      seen.push(await probe(url));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(JSON.stringify((await answer).content)).toContain("unblocked");
    const stalled = seen.filter((p) => p.status === 503);
    // Only a thread of its own can answer while the loop spins: the main loop would answer
    // once it is free again, with 200.
    expect(stalled.length).toBeGreaterThan(0);
    expect(stalled[0]?.body).toMatchObject({ status: "stalled" });
    expect(stalled[0]?.body.eventLoopSilentMs).toBeGreaterThan(STALL_MS);
    const after = await probe(url);
    expect(after.status).toBe(200);
    expect(after.body.status).toBe("ok");
  }, 90_000);
});
