import { Gauge, type Registry } from "prom-client";
import { withDeadline } from "../../ops/withDeadline.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";

/** The longest a scrape waits for the cluster-wide run gauges before serving the last values. */
export const RUN_GAUGES_DEADLINE_MS = 500;

/** Pending approvals read to count the runs they park; past it, `yiem_runs_parked` is a lower bound. */
export const PARKED_RUNS_READ_CAP = 10_000;

/** The cluster-wide counts a scrape reads from Redis. */
export interface ClusterRunCounts {
  /** Calls awaiting a human decision, cluster-wide (the `approvalsPending` index). */
  approvalsPending: number;
  /** Runs parked on them: the distinct sessions among those calls. */
  runsParked: number;
}

/**
 * Reads the cluster-wide counts from the index of pending approvals every coordinator keeps
 * (`approvalsPending`, one sorted set): its size, and the distinct sessions of its first
 * `PARKED_RUNS_READ_CAP` entries. Two commands in one round trip; never a scan of the keys.
 */
export async function readClusterRunCounts(
  redis: RedisClient,
  keys: ClusterKeys,
): Promise<ClusterRunCounts> {
  const [size, members] = await Promise.all([
    redis.zcard(keys.approvalsPending),
    redis.zrange(keys.approvalsPending, 0, PARKED_RUNS_READ_CAP - 1),
  ]);
  const sessions = new Set(members.map((member) => member.slice(0, member.lastIndexOf(" "))));
  return { approvalsPending: size, runsParked: sessions.size };
}

/** Where the run gauges come from, once the coordinator runs. */
export interface RunGaugeSource {
  /** Sessions this coordinator holds (runs it is running) now. */
  heldSessions(): number;
  /** Of those, the runs waiting for their turn under a shared provider limit (slots lent). */
  runsWaitingAtLimit(): number;
  /** The cluster-wide counts (see `readClusterRunCounts`). */
  readClusterCounts(): Promise<ClusterRunCounts>;
}

/** The run gauges and their refresher. */
export interface RunGauges {
  /** Sets where they come from (the coordinator, once started). */
  setSource(source: RunGaugeSource): void;
  /**
   * Reads the cluster-wide counts, waiting at most 500 ms: past it the gauges keep their
   * last values. One read at a time. Never rejects.
   */
  refresh(): Promise<void>;
}

/**
 * Registers `yiem_runs_running` (runs this coordinator runs now: sum it over coordinators for
 * the cluster), `yiem_runs_waiting_at_limit` (those of them waiting for a model call's turn
 * under a shared provider limit, their run slots lent to other runs), `yiem_runs_parked` and `yiem_approvals_pending` (cluster-wide: every
 * coordinator reports the same value, so take their `max`), read at each scrape.
 */
export function createRunGauges(registry: Registry): RunGauges {
  let source: RunGaugeSource | undefined;
  let reading: Promise<void> | undefined;
  new Gauge({
    name: "yiem_runs_running",
    help: "Runs this coordinator is running now (sessions it holds); sum over coordinators for the cluster",
    registers: [registry],
    collect() {
      this.set(source?.heldSessions() ?? 0);
    },
  });
  new Gauge({
    name: "yiem_runs_waiting_at_limit",
    help: "Runs this coordinator holds that wait for a model call's turn under a shared provider limit; their run slots are lent to other runs",
    registers: [registry],
    collect() {
      this.set(source?.runsWaitingAtLimit() ?? 0);
    },
  });
  const parked = new Gauge({
    name: "yiem_runs_parked",
    help: "Runs parked waiting for approval, cluster-wide (every coordinator reports the same: take the max)",
    registers: [registry],
  });
  const pending = new Gauge({
    name: "yiem_approvals_pending",
    help: "Tool calls awaiting a human decision, cluster-wide (every coordinator reports the same: take the max)",
    registers: [registry],
  });
  const readAll = async (from: RunGaugeSource) => {
    const counts = await from.readClusterCounts();
    parked.set(counts.runsParked);
    pending.set(counts.approvalsPending);
  };
  return {
    setSource(next) {
      source = next;
    },
    async refresh() {
      if (!source) return;
      reading ??= readAll(source)
        .catch(() => undefined)
        .finally(() => {
          reading = undefined;
        });
      await withDeadline(reading, RUN_GAUGES_DEADLINE_MS).catch(() => undefined);
    },
  };
}
