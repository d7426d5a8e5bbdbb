import type { RedisClient } from "./redisConnection.js";
import type { ScriptedRedis, YiemScripts } from "./scripts.js";

/**
 * How many replicas must acknowledge a session write before it counts as done. Redis
 * replicates asynchronously: a write acknowledged just before its master dies can be lost in
 * the failover. With `replicas > 0`, each state-changing session script is followed, in the
 * same round trip and on the same node, by `WAIT replicas timeoutMs`.
 */
export interface ReplicaAcks {
  replicas: number;
  timeoutMs: number;
  /** Told when fewer replicas than asked acknowledged in time (the write stands, unprotected). */
  onShort?: (script: string, acked: number) => void;
}

/** No replica acknowledgement: the default on a single Redis. */
export const NO_REPLICA_ACKS: ReplicaAcks = { replicas: 0, timeoutMs: 0 };

/**
 * The scripts whose writes a run cannot lose: inputs, runs, the transcript, responses,
 * approval decisions, handoffs and the session a request job without `sessionId` started. Lease scripts are not among them: a lease lost in a failover only
 * fences its holder out (its next write fails), which the coordinator already survives.
 */
const DURABLE_SCRIPTS: ReadonlySet<string> = new Set<keyof YiemScripts>([
  "yiemEnqueueInput",
  "yiemStartRun",
  "yiemDrainInputs",
  "yiemAppendMessage",
  "yiemAppendMessages",
  "yiemAppendHandoff",
  "yiemFinishRun",
  "yiemRequestApproval",
  "yiemDecideApproval",
  "yiemParkRun",
  "yiemMarkRunAborted",
  "yiemAbortChildRun",
  "yiemTakeAbortRequest",
  "yiemMarkRunning",
  "yiemClaimRequestSession",
]);

type Reply = [Error | null, unknown];
type ScriptPipeline = Record<string, (...args: unknown[]) => unknown> & {
  exec(): Promise<Reply[] | null>;
};

/** Runs `script` and a `WAIT` in one pipeline (same node: WAIT has no key and follows the script's). */
async function runAcknowledged(
  redis: RedisClient,
  script: string,
  args: unknown[],
  acks: ReplicaAcks,
): Promise<unknown> {
  const pipeline = redis.pipeline() as unknown as ScriptPipeline;
  pipeline[script]?.(...args);
  pipeline.wait?.(acks.replicas, acks.timeoutMs);
  const [[err, reply] = [null, undefined], [, acked] = [null, 0]] = (await pipeline.exec()) ?? [];
  if (err) throw err;
  if (Number(acked) < acks.replicas) acks.onShort?.(script, Number(acked));
  return reply;
}

/**
 * `redis` with its durable session scripts acknowledged by `acks.replicas` replicas (see
 * `ReplicaAcks`); every other command passes through unchanged. With no replicas asked, it
 * returns `redis` itself.
 *
 * @example const store = new SessionStore(withReplicaAcks(withScripts(redis), { replicas: 1, timeoutMs: 250 }), keys)
 */
export function withReplicaAcks<R extends RedisClient>(
  redis: ScriptedRedis<R>,
  acks: ReplicaAcks,
): ScriptedRedis<R> {
  if (acks.replicas <= 0) return redis;
  return new Proxy(redis, {
    get(target, property, receiver) {
      if (typeof property === "string" && DURABLE_SCRIPTS.has(property)) {
        return (...args: unknown[]) => runAcknowledged(target, property, args, acks);
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
