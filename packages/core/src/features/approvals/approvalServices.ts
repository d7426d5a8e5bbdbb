import { Queue, type Worker, type WorkerOptions } from "bullmq";
import type { Logger } from "../../ops/logger.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import {
  type DecisionDeps,
  denyExpiredApprovals,
  dropOrphanedIndexEntries,
} from "./approvalDecisions.js";
import { startDecisionJobs } from "./decisionJobs.js";

/** How often a coordinator denies the calls whose approval timeout has passed. */
const APPROVAL_SWEEP_MS = 500;

/** How often a coordinator reads a page of the approval index for entries without a request. */
const ORPHAN_SWEEP_MS = 30_000;

/** Index entries younger than this (or two leases) are never taken for orphans. */
const ORPHAN_INDEX_AGE_MS = 60_000;

/** What a coordinator runs for approvals besides its runs: the decisions queue and two sweeps. */
export interface ApprovalServices {
  /** The decisions queue (for dashboards); closed by the caller with its other queues. */
  decisionsQueue: Queue;
  /** Stops the sweeps and lets a decision in progress finish (it may resume a run). */
  stop(): Promise<void>;
}

/** What the approval services need. */
export interface ApprovalServicesOptions {
  connection: RedisClient;
  keys: ClusterKeys;
  decisions: DecisionDeps;
  /** The coordinator's worker settings (locks, retention), for the decisions queue's worker. */
  worker: Partial<WorkerOptions>;
  leaseMs: number;
  log: Logger;
  /** Makes the decisions worker's lock tokens name the coordinator's life (`ProcessRuntime.stampWorker`). */
  stampWorker?: (worker: Worker) => void;
}

/**
 * Starts the decisions queue's worker (`startDecisionJobs`), the sweep that denies calls past
 * their approval timeout, and the sweep of index entries whose call has no request.
 */
export function startApprovalServices(options: ApprovalServicesOptions): ApprovalServices {
  const { connection, keys, decisions, log } = options;
  const decisionJobs: Worker = startDecisionJobs({
    connection,
    keys,
    decisions,
    log,
    worker: options.worker,
  });
  options.stampWorker?.(decisionJobs);
  const decisionsQueue = new Queue(keys.decisionsQueue, { connection, prefix: keys.bullPrefix });
  const approvalSweep = setInterval(() => void denyExpiredApprovals(decisions), APPROVAL_SWEEP_MS);
  const indexSweep = { from: 0 };
  const orphanAgeMs = Math.max(ORPHAN_INDEX_AGE_MS, 2 * options.leaseMs);
  const orphanSweep = setInterval(
    () => void dropOrphanedIndexEntries(decisions, indexSweep, orphanAgeMs),
    ORPHAN_SWEEP_MS,
  );
  return {
    decisionsQueue,
    async stop() {
      clearInterval(approvalSweep);
      clearInterval(orphanSweep);
      await decisionJobs.close();
    },
  };
}
