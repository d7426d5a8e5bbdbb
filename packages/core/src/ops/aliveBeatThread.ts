import { parentPort, workerData } from "node:worker_threads";
import { clusterKeys } from "../redis/keys.js";
import { connectRedis, type RedisTarget } from "../redis/redisConnection.js";
import { beatAlive } from "../state/processLives.js";

/** What the heartbeat thread is started with (`startAliveBeat`). */
export interface AliveBeatThreadData {
  /** Where Redis is (functions left out: they do not cross to a thread). */
  redis: RedisTarget;
  prefix: string;
  lifeId: string;
  ttlMs: number;
  /** How often it beats. */
  everyMs: number;
}

/** The message that stops the thread. */
export interface AliveBeatStop {
  kind: "stop";
}

/**
 * What the thread tells its process: `beating` after its first beat went through (the main
 * thread's bridging beats can stop), `refused` after a beat that failed (Redis away or
 * refusing writes) or had not gone through when the next was due, `stopped` once it beats no
 * more.
 */
export type AliveBeatThreadMessage =
  | { kind: "beating" }
  | { kind: "refused" }
  | { kind: "stopped" };

/**
 * The heartbeat thread: renews the process's life every `everyMs` on a connection of its own,
 * so a main thread busy with a long synchronous tool or a GC pause does not make the process
 * look dead (a stopped process, SIGSTOP, stops this thread too); each beat records whether
 * Redis holds the life's subscription (`holdLifeSubscription`, on the main thread). A beat
 * that fails (Redis away) is only skipped: the next one goes out on time. Posts `beating`
 * after its first beat went through. Stops on `{ kind: "stop" }`, after which it beats no
 * more, and posts `stopped`.
 */
function run(data: AliveBeatThreadData): void {
  const keys = clusterKeys(data.prefix);
  const redis = connectRedis(data.redis, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on("error", () => undefined); // reconnects by itself; a missed beat is the only cost
  let inFlight = false;
  let told = false;
  const refused = () =>
    parentPort?.postMessage({ kind: "refused" } satisfies AliveBeatThreadMessage);
  const beat = () => {
    // The last beat has not gone through a beat later (a failover: a cluster command waits out
    // its redirections instead of failing): it is as late as a refused one.
    if (inFlight) return refused();
    inFlight = true;
    beatAlive(redis, keys, data.lifeId, data.ttlMs)
      .then(() => {
        if (told) return;
        told = true;
        parentPort?.postMessage({ kind: "beating" } satisfies AliveBeatThreadMessage);
      })
      .catch(refused)
      .finally(() => {
        inFlight = false;
      });
  };
  const timer = setInterval(beat, data.everyMs);
  redis.once("ready", beat);
  parentPort?.on("message", (message: AliveBeatStop) => {
    if (message.kind !== "stop") return;
    clearInterval(timer);
    redis.disconnect();
    parentPort?.postMessage({ kind: "stopped" } satisfies AliveBeatThreadMessage);
  });
}

run(workerData as AliveBeatThreadData);
