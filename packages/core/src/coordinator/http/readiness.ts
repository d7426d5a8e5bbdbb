import type { Queue } from "bullmq";
import type { RedisWatch } from "../../ops/redisWatch.js";
import { withDeadline } from "../../ops/withDeadline.js";
import type { RedisClient } from "../../redis/redisConnection.js";

/** Whether a coordinator can take work now; `reason` is one line when it cannot. */
export type Readiness = { ready: true } | { ready: false; reason: string };

/** What `checkReadiness` looks at. */
export interface ReadinessProbe {
  /** The coordinator's command connection. */
  command: RedisClient;
  /** The coordinator queue: its job counts must be readable. */
  queue: Queue;
  /** The connection's watch, for the reason of an outage (`connect ECONNREFUSED …`). */
  watch: RedisWatch;
  /** The deadline of the whole check. Default 1000 ms. */
  timeoutMs?: number;
}

/** The default deadline of a readiness check. */
export const READINESS_TIMEOUT_MS = 1000;

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
}

/** A PING, then the coordinator queue's counts; each failure says what failed. */
async function probeOnce(probe: ReadinessProbe): Promise<Readiness> {
  try {
    await probe.command.ping();
  } catch (err) {
    return { ready: false, reason: `redis unreachable: ${messageOf(err)}` };
  }
  try {
    await probe.queue.getJobCounts("waiting", "active");
  } catch (err) {
    return { ready: false, reason: `coordinator queue unreadable: ${messageOf(err)}` };
  }
  return { ready: true };
}

/**
 * Checks that Redis answers a PING and the coordinator queue's job counts can be read, within
 * `timeoutMs` (1 s). A connection that is not ready fails at once with
 * `redis unreachable: <last error>`, sending nothing; so does a check whose connection is
 * lost while it waits; any other check past the deadline fails with `timed out after 1000 ms`.
 * Never throws and never waits longer than the deadline.
 */
export async function checkReadiness(probe: ReadinessProbe): Promise<Readiness> {
  if (!probe.watch.reachable()) return unreachable(probe);
  try {
    return await withDeadline(probeOnce(probe), probe.timeoutMs ?? READINESS_TIMEOUT_MS);
  } catch (err) {
    // A connection lost while the check waited says so rather than "timed out".
    return probe.watch.reachable() ? { ready: false, reason: messageOf(err) } : unreachable(probe);
  }
}

/** `redis unreachable: <the connection's last error, else its status>`. */
function unreachable(probe: ReadinessProbe): Readiness {
  const why = probe.watch.lastError() ?? `no connection (${probe.command.status})`;
  return { ready: false, reason: `redis unreachable: ${why}` };
}
