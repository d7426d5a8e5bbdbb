/**
 * The shared rig of the call measurements: a private `redis-server`, worker processes of both
 * kinds (Yiem's and plain BullMQ's), the coordinator side in this process (`openHarness`) and
 * the raw BullMQ producer.
 */
import type { RedisClient } from "@yiem/core";
import { connectRedis } from "@yiem/core";
import { DURABLE_CONNECTION } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { processCpuMs } from "../sampling/processSampler.js";
import { type Harness, openHarness } from "./harness.js";
import { openRawClient, type RawClient } from "./rawBullmq.js";
import { type WorkerKind, type WorkerPool, workerPool } from "./workerPool.js";

/** The open rig. */
export interface Rig {
  redis: TestRedis;
  /** One worker process of each kind at first; `add` starts more. */
  pool: WorkerPool;
  harness: Harness;
  /** The raw producer's connection (shared like the coordinator's queue connection). */
  rawConnection: RedisClient;
  raw: RawClient;
}

/** Closes what was opened of a rig, in reverse order, whatever happened. */
export async function closeRig(rig: Partial<Rig>): Promise<void> {
  await rig.raw?.close().catch(() => undefined);
  await rig.rawConnection?.quit().catch(() => undefined);
  await rig.harness?.close().catch(() => undefined);
  await rig.pool?.stop();
  await rig.redis?.stop();
}

/**
 * Starts a private `redis-server`, one worker process of each kind, the coordinator side and
 * the raw producer; on failure closes whatever had started and rethrows.
 */
export async function openRig(progress: (text: string) => void): Promise<Rig> {
  const rig: Partial<Rig> = {};
  try {
    const redis = await startTestRedis({ privateServer: true });
    rig.redis = redis;
    rig.pool = workerPool(redis.url, redis.prefix);
    progress(`private redis-server at ${redis.url}; starting worker processes`);
    await Promise.all([rig.pool.add("yiem"), rig.pool.add("raw")]);
    const harness = await openHarness(redis.url, redis.prefix);
    rig.harness = harness;
    rig.rawConnection = connectRedis(redis.url, DURABLE_CONNECTION);
    rig.raw = await openRawClient(rig.rawConnection, harness.keys.bullPrefix);
    return rig as Rig;
  } catch (err) {
    await closeRig(rig);
    throw err;
  }
}

/** Reads the CPU time (ms) the rig's worker processes of `kind` have used so far, summed. */
export function workerCpu(pool: WorkerPool, kind: WorkerKind): () => Promise<number> {
  return async () => {
    const values = await Promise.all(pool.pids(kind).map(processCpuMs));
    return values.reduce<number>((sum, value) => sum + (value ?? Number.NaN), 0);
  };
}
