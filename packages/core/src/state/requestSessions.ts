import { randomUUID } from "node:crypto";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { NO_REPLICA_ACKS, type ReplicaAcks, withReplicaAcks } from "../redis/replicaAcks.js";
import { type ScriptedRedis, withScripts } from "../redis/scripts.js";

/**
 * The field of a coordinator-queue job's BullMQ hash that holds the session a job without
 * `sessionId` started (`yiemSessionId`).
 */
export const REQUEST_SESSION_FIELD = "yiemSessionId";

/**
 * The sessions of coordinator-queue jobs that name none. Each gets a random UUID (122 random
 * bits: nothing about the job, its sequential id or its time, predicts it), recorded in the
 * job's own hash at its first intake, so a job delivered again (its coordinator died, a retry
 * from the board) lands in the same session, and the id goes when the job is removed.
 */
export class RequestSessions {
  private readonly redis: ScriptedRedis;

  constructor(
    redis: RedisClient,
    private readonly keys: ClusterKeys,
    acks: ReplicaAcks = NO_REPLICA_ACKS,
  ) {
    this.redis = withReplicaAcks(withScripts(redis), acks);
  }

  /**
   * The session of job `jobId`: the one recorded at its first intake, else `proposed` (a new
   * random one by default), recorded now (`claimRequestSession-1.lua`). `undefined` when the
   * job no longer exists. A caller that proposes an id must make it as random (`randomUUID`).
   */
  async claim(jobId: string, proposed: string = randomUUID()): Promise<string | undefined> {
    const sessionId = await this.redis.yiemClaimRequestSession(
      this.keys.requestJob(jobId),
      REQUEST_SESSION_FIELD,
      proposed,
    );
    return sessionId || undefined;
  }

  /** The session recorded for job `jobId`, if a coordinator took the job in already. */
  async read(jobId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.requestJob(jobId), REQUEST_SESSION_FIELD)) ?? undefined;
  }
}
