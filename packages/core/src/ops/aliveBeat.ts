import { Worker } from "node:worker_threads";
import type { ClusterKeys } from "../redis/keys.js";
import { connectRedis, type RedisClient, type RedisTarget } from "../redis/redisConnection.js";
import { beatAlive, beatEveryMs, forgetLife } from "../state/processLives.js";
import type { AliveBeatThreadData, AliveBeatThreadMessage } from "./aliveBeatThread.js";
import { bundledThreadFile } from "./bundledThreads.js";
import type { Logger } from "./logger.js";
import { onProcessWarm } from "./processWarm.js";

/**
 * How long after the heartbeat starts its thread starts at the latest, when the process did
 * not do its first piece of work by then (`onProcessWarm`).
 */
export const BEAT_THREAD_START_MS = 1000;

/** How long `stop` waits for the thread to say it stopped before ending it. */
const STOP_WAIT_MS = 1000;

/** Options of `startAliveBeat`. */
export interface AliveBeatOptions {
  redis: RedisTarget;
  keys: ClusterKeys;
  /** The process's command connection (what forgets the life at `stop`). */
  command: RedisClient;
  lifeId: string;
  /** How long the life counts as alive after a beat; 0: no heartbeat. */
  ttlMs: number;
  log: Logger;
}

/** A running heartbeat. */
export interface AliveBeat {
  /**
   * When a beat of this process last failed or was a beat late (`Date.now()`; -Infinity if
   * none): Redis was away, refused the write or could not be reached (a failover), as it then
   * was for every other process's beats.
   */
  lastRefusedAt(): number;
  /** Stops beating, then forgets the life (call once the process holds nothing). */
  stop(): Promise<void>;
}

/** `target` without what cannot cross to a thread (an ioredis option that is a function). */
function cloneableTarget(target: RedisTarget): RedisTarget {
  if (typeof target === "string" || "clusterNodes" in target) return target;
  return Object.fromEntries(
    Object.entries(target).filter(([, value]) => typeof value !== "function"),
  ) as RedisTarget;
}

/**
 * The thread's file in this process's bundle (`bundledThreadFile`); else its module beside
 * this one: the compiled `.js`; or, when this file runs as its
 * TypeScript source (tsx, vitest), the `.ts` beside it, loaded through tsx's loader, which a
 * worker thread does not inherit from its parent.
 */
function startThread(data: AliveBeatThreadData): Worker {
  const bundled = bundledThreadFile("aliveBeatThread");
  if (bundled) return new Worker(bundled, { workerData: data });
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(new URL("./aliveBeatThread.js", import.meta.url), { workerData: data });
  const source = new URL("./aliveBeatThread.ts", import.meta.url).href;
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

/**
 * Holds the life's sharded subscription (`keys.lifeChannel`; nothing is published there) on a
 * connection of its own, from the process's start: Redis drops it the moment the process's
 * sockets close (SIGKILL, a crash), which tells the coordinators that the process died as
 * soon as its beats are late (`findDeadLives`); a busy or blocked main thread keeps it (the
 * socket stays open). Subscribes again after every reconnect, and calls `onSubscribed` each
 * time (a beat then records it at once, not a beat later). Every beat records whether
 * Redis holds it (`beatAlive`), so a subscribe Redis refuses (an ACL without the channel) or
 * one a failover lost leaves the life unwatched: its ttl alone finds it then.
 */
function holdLifeSubscription(options: AliveBeatOptions, onSubscribed: () => void): RedisClient {
  // On a cluster, the subscribe goes to the node serving the channel's slot (the `{workers}`
  // one): without sharded subscribers, ioredis sends it to one node, and one redirected never settles.
  const redis = connectRedis(
    options.redis,
    { maxRetriesPerRequest: 1 },
    { shardedSubscribers: true },
  );
  redis.on("error", () => undefined); // reconnects by itself
  redis.on("ready", () => {
    redis.ssubscribe(options.keys.lifeChannel(options.lifeId)).then(onSubscribed, () => undefined);
  });
  return redis;
}

/**
 * Beats life `lifeId` from the main thread, on the command connection, every `everyMs` until
 * stopped: the bridge while the heartbeat thread boots (loading it from TypeScript sources on
 * a loaded machine took over 3 s, longer than a life's ttl: both coordinators of a test found
 * each other dead and took each other's sessions), and the fallback if the thread fails. The
 * first beat goes out at once, before any lock or lease the process takes (commands go in
 * order on that connection), so a process killed at once is still noticed.
 */
function bridgeBeats(
  options: AliveBeatOptions,
  everyMs: number,
  onRefused: () => void,
): { stop(): void } {
  let inFlight = false;
  const beat = () => {
    if (inFlight) return onRefused(); // the last one is a beat late: as late as a refused one
    inFlight = true;
    beatAlive(options.command, options.keys, options.lifeId, options.ttlMs)
      .catch(onRefused)
      .finally(() => {
        inFlight = false;
      });
  };
  beat();
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * Starts the process's heartbeat: a worker thread (`aliveBeatThread.ts`) that keeps life
 * `lifeId` alive in Redis for `ttlMs` past each beat, beating five times per `ttlMs`, so a
 * busy main thread does not make the process look dead. Until the thread's first beat went
 * through (and again if the thread fails), the main thread beats instead (`bridgeBeats`).
 * The thread starts once the process did its first piece of work (`onProcessWarm`: a
 * coordinator's first run, a tool worker's first call) or `BEAT_THREAD_START_MS` after this
 * call, whichever comes first: its boot (some 250 ms of CPU: Node's own modules, ioredis)
 * then does not compete with a replacement's start and first run (docs/PERFORMANCE.md,
 * "Peers"). Every coordinator and tool worker runs one from `startProcessRuntime`, so however
 * it was started (the apps, `startClusterProcesses`, in a test's process) its death is
 * noticed by the coordinators' failure detector. From the start, the process also holds its
 * life's subscription (`holdLifeSubscription`), which every beat records: a process killed
 * with its sockets closed is found dead once its beats are late, not when its ttl runs out.
 * With `ttlMs` 0, nothing runs.
 *
 * @example const beat = startAliveBeat({ redis, keys, command, lifeId, ttlMs: 1500, log });
 */
export function startAliveBeat(options: AliveBeatOptions): AliveBeat {
  if (options.ttlMs <= 0)
    return { stop: async () => undefined, lastRefusedAt: () => Number.NEGATIVE_INFINITY };
  const everyMs = beatEveryMs(options.ttlMs);
  let refusedAt = Number.NEGATIVE_INFINITY;
  const onRefused = () => {
    refusedAt = Date.now();
  };
  let stopping = false;
  // A beat as soon as the subscription holds: the life is watched from its first moments.
  const subscription = holdLifeSubscription(options, () => {
    if (stopping) return; // a beat after the life was forgotten would bring it back
    beatAlive(options.command, options.keys, options.lifeId, options.ttlMs).catch(onRefused);
  });
  let bridge: { stop(): void } | undefined = bridgeBeats(options, everyMs, onRefused);
  let thread: Worker | undefined;
  const startBeatThread = () => {
    clearTimeout(latest);
    if (thread || stopping) return;
    thread = startThread({
      redis: cloneableTarget(options.redis),
      prefix: options.keys.prefix,
      lifeId: options.lifeId,
      ttlMs: options.ttlMs,
      everyMs,
    });
    thread.on("message", (message: AliveBeatThreadMessage) => {
      if (message.kind === "refused") onRefused();
      if (message.kind !== "beating") return;
      bridge?.stop();
      bridge = undefined;
    });
    thread.on("error", (err) => {
      options.log.warn(
        { err: err.message },
        "the heartbeat thread failed; beating from the main thread",
      );
      bridge ??= bridgeBeats(options, everyMs, onRefused);
    });
    thread.on("exit", () => {
      if (!stopping) bridge ??= bridgeBeats(options, everyMs, onRefused);
    });
    thread.unref();
  };
  const latest = setTimeout(startBeatThread, BEAT_THREAD_START_MS);
  latest.unref();
  onProcessWarm(startBeatThread);
  return {
    lastRefusedAt: () => refusedAt,
    async stop() {
      stopping = true;
      clearTimeout(latest);
      bridge?.stop();
      const started = thread;
      if (started) await stopThread(started);
      subscription.disconnect();
      await forgetLife(options.command, options.keys, options.lifeId).catch(() => undefined);
    },
  };
}

/** Tells the heartbeat thread to stop, waits for it (`STOP_WAIT_MS` at most), then ends it. */
async function stopThread(thread: Worker): Promise<void> {
  const stopped = new Promise((resolve) => {
    thread.on("message", (message: AliveBeatThreadMessage) => {
      if (message.kind === "stopped") resolve(undefined);
    });
    thread.once("exit", resolve);
    setTimeout(resolve, STOP_WAIT_MS).unref();
  });
  thread.postMessage({ kind: "stop" });
  await stopped;
  await thread.terminate();
}
