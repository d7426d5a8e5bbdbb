import { setTimeout as sleep } from "node:timers/promises";
import { isMayHaveRun } from "../../protocol/mayHaveRun.js";
import type { ToolJobResult } from "../../protocol/toolJobs.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { readToolDone } from "../../state/toolDoneMarkers.js";

/** How often a late result's marker is read during the grace. */
const LATE_POLL_MS = 200;

/**
 * Whether a finished job's result says the call may have run with its result unknown (a
 * worker's "may have run" for a call whose earlier worker stopped answering; see
 * `MayHaveRunDetails`): an error result whose details say so.
 */
export function isMayHaveRunValue(value: ToolJobResult | undefined): boolean {
  return value?.isError === true && isMayHaveRun(value.result?.details);
}

/**
 * For a call whose worker stopped answering (its job given up as "may have run", or failed
 * as stalled): that worker may only have paused (SIGSTOP, a long GC, an event loop blocked
 * past its lock) and still finish the call and record its result in the job's finished marker
 * (a worker's marker write is unconditional, so it replaces a "may have run" one). Reads the
 * marker every 200 ms for up to `graceMs` and resolves with the first result in it that is not
 * "may have run"; `undefined` when none came, `signal` aborted, or Redis stayed away. Never
 * throws; waits no longer than `graceMs` plus one read (which waits out a Redis briefly away).
 */
export async function awaitLateResult(
  redis: RedisClient,
  keys: ClusterKeys,
  job: { queue: string; jobId: string },
  graceMs: number,
  signal?: AbortSignal,
): Promise<ToolJobResult | undefined> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const done = await readToolDone(redis, keys, job.queue, job.jobId).catch(() => undefined);
    if (done?.finished && done.result && !isMayHaveRunValue(done.result)) return done.result;
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) return undefined;
    await sleep(Math.min(LATE_POLL_MS, left));
  }
}
