import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { NO_REPLICA_ACKS, type ReplicaAcks, withReplicaAcks } from "../redis/replicaAcks.js";
import { type ScriptedRedis, withScripts } from "../redis/scripts.js";
import { type StreamCaps, streamCaps } from "./eventBus.js";

/**
 * What every store of session state in Redis starts from: a connection with Yiem's scripts on
 * it, whose writes wait for the replica acknowledgements `acks` asks, the cluster's keys, and
 * how the session's replay stream is capped (for the events a store's scripts publish).
 */
export abstract class ScriptedStore {
  protected readonly redis: ScriptedRedis;

  constructor(
    redis: RedisClient,
    protected readonly keys: ClusterKeys,
    acks: ReplicaAcks = NO_REPLICA_ACKS,
    /** How the session's replay stream is capped (the events this store publishes). */
    protected readonly caps: StreamCaps = streamCaps(),
  ) {
    this.redis = withReplicaAcks(withScripts(redis), acks);
  }
}
