import { setTimeout as sleep } from "node:timers/promises";
import { DecisionRefusedError, type YiemClient } from "@yiem/core";
import { hashText } from "./random.js";

/** What the approver decided for a call, by the call's ledger label. */
export type Decisions = Map<string, "approved" | "denied">;

/** The approver's record: its decisions and how many attempts the faults cost it. */
export interface ApproverRecord {
  decisions: Decisions;
  /** Decision attempts that failed (Redis down, no coordinator to record it in time). */
  failedAttempts: number;
}

/** Whether the approver approves the call labelled `label`: three in four, fixed by the label. */
export function approves(seed: number, label: string): boolean {
  return hashText(`${seed}:${label}`) % 4 !== 0;
}

/**
 * The soak's approver: a connection of its own (`YiemClient` as the approver role uses it)
 * that lists the calls awaiting approval every `pollMs` and approves or denies each, as
 * `approves` says (so a retried decision is the same decision). A decision refused because
 * the call was decided already counts as taken; one that failed for a fault is tried again on
 * the next round. Runs until `stop`.
 */
export function startApprover(
  client: YiemClient,
  seed: number,
  pollMs = 250,
): { record: ApproverRecord; stop(): Promise<void> } {
  const record: ApproverRecord = { decisions: new Map(), failedAttempts: 0 };
  let stopped = false;
  const decideOne = async (sessionId: string, callKey: string, label: string) => {
    const approved = approves(seed, label);
    const options = { by: "chaos approver", reason: "chaos approver denied it", timeoutMs: 10_000 };
    try {
      if (approved) await client.approve(sessionId, callKey, options);
      else await client.deny(sessionId, callKey, options);
      record.decisions.set(label, approved ? "approved" : "denied");
    } catch (err) {
      if (err instanceof DecisionRefusedError)
        record.decisions.set(label, approved ? "approved" : "denied");
      else record.failedAttempts++;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const pending = await client.pendingApprovals();
        await Promise.all(
          pending
            .filter((p) => !record.decisions.has(String(p.arguments.label)))
            .map((p) => decideOne(p.sessionId, p.callKey, String(p.arguments.label))),
        );
      } catch {
        record.failedAttempts++; // Redis down: try again next round
      }
      await sleep(pollMs);
    }
  })();
  return {
    record,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
