/**
 * A worker dies mid-call of a tool limited to one call at once (`concurrency: 1`): the
 * tool's next call must not wait for the dead worker's lock to run out at the default
 * `YIEM_LOCK_MS` (30 s) and `YIEM_STALLED_INTERVAL_MS` (30 s), as every call of that tool in
 * the cluster did. The processes run with those defaults here.
 */
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

/** The tools of this cluster: `ledgerSingle` only. */
const toolsDir = fileURLToPath(new URL("../support/singleSlotTools/", import.meta.url));

/** The default lock of a tool job (`YIEM_LOCK_MS`), which these processes keep. */
const DEFAULT_LOCK_MS = 30_000;

const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  model: { respond: faultModel },
  env: {
    YIEM_TOOLS_DIR: toolsDir,
    YIEM_LOCK_MS: String(DEFAULT_LOCK_MS),
    YIEM_STALLED_INTERVAL_MS: "30000",
  },
});

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

/** When each call of the session first reported progress (it started), and on which worker. */
function watchStarts(sessionId: string) {
  const starts = new Map<string, { at: number; workerId: string }>();
  const done = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
      if (event.type === "toolExecUpdate" && !starts.has(event.toolCallId)) {
        starts.set(event.toolCallId, { at: Date.now(), workerId: String(event.workerId) });
      }
      if (event.type === "agentEnd") return;
    }
  })();
  return { starts, done };
}

describe("faults: a worker dies mid-call of a concurrency-1 tool", () => {
  it("runs the tool's next call before the dead worker's default lock could have expired", async () => {
    const sessionId = randomUUID();
    const { starts, done } = watchStarts(sessionId);
    // Two calls of ledgerSingle: s1-1 runs for a minute, s1-2 waits for the one slot.
    const { runId } = await cluster.client.send("ledgerSingle s1 60000,50 2", { sessionId });
    while (!starts.has("s1-1")) await new Promise((resolve) => setTimeout(resolve, 20));
    const first = starts.get("s1-1");
    const victim = cluster.workers.find((w) =>
      w.lines.some((l) => l.includes(`"workerId":"${first?.workerId}"`)),
    );
    if (!victim || !first) throw new Error(`no worker process for ${first?.workerId}`);
    expect(starts.has("s1-2")).toBe(false); // held back by the limit
    const killedAt = Date.now();
    victim.signal("SIGKILL");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 50_000 });
    await done;
    expect(textOf(response)).toBe(
      "final s1: ledgerSingle: the worker running this call stopped answering; the call may have run: check before repeating it (stopped 1 times, retries: 0) | s1-2 recorded",
    );
    const second = starts.get("s1-2");
    expect(second?.workerId).not.toBe(first.workerId);
    // An ordering, not a speed: the dead worker's lock, taken as s1-1 started, lasted
    // YIEM_LOCK_MS; s1-2 ran before it could have run out.
    expect(second?.at).toBeLessThan(first.at + DEFAULT_LOCK_MS);
    expect(await ledger.countsByCall()).toEqual(
      new Map([
        ["s1-1", 1],
        ["s1-2", 1],
      ]),
    );
    await recordFigure({
      scenario: "worker SIGKILLed mid-call of a concurrency-1 tool (default lock times)",
      runs: 1,
      calls: 2,
      lost: 0,
      duplicated: 0,
      recoveryMs: Date.now() - killedAt,
      note: `the tool's next call started ${(((second?.at ?? 0) - killedAt) / 1000).toFixed(1)} s after the kill (limited queues lock for 5 s)`,
    });
    await cluster.addWorker();
  }, 70_000);
});
