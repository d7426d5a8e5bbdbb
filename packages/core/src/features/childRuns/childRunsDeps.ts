import type { Logger } from "../../ops/logger.js";
import type { CoordinatorJobData } from "../../protocol/coordinatorJob.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { StreamCaps } from "../../state/eventBus.js";
import type { ChildRunStore } from "./childRunStore.js";

/** What the child runs feature is built with (once, at the composition root). */
export interface ChildRunsFeatureDeps {
  store: ChildRunStore;
  /**
   * False when no agent this coordinator serves calls another: then no session it holds is a
   * child, and a hold reads no parent (one Redis round trip less per hold).
   */
  callsAgents: boolean;
  /** How deep a tree may grow (`YIEM_MAX_AGENT_DEPTH`). */
  maxDepth: number;
  /** Adds a child run's request to the coordinator queue (idempotent by `jobId`). */
  submit: (data: CoordinatorJobData, jobId: string) => Promise<void>;
  /** Makes sure a parent session whose call was answered runs again. */
  resume: (sessionId: string) => Promise<void>;
  command: RedisClient;
  keys: ClusterKeys;
  streamCaps?: StreamCaps;
  log: Logger;
}
