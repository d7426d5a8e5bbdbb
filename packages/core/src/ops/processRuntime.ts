import { hostname } from "node:os";
import type { Worker, WorkerOptions } from "bullmq";
import { parseControlMessage } from "../protocol/controlMessages.js";
import { type ClusterKeys, clusterKeys, keyLayoutOf } from "../redis/keys.js";
import {
  connectRedis,
  DURABLE_CONNECTION,
  describeRedisTarget,
  duplicateConnection,
  type RedisClient,
} from "../redis/redisConnection.js";
import { isConnectionError } from "../redis/redisErrors.js";
import { warnOnOldRedis } from "../redis/redisVersion.js";
import { SafeTakeWorker } from "../redis/safeTakeWorker.js";
import type { RedisConnectionOptions } from "../settings/optionShapes.js";
import { holderToken, newLifeId } from "../state/processLives.js";
import { type AliveBeat, startAliveBeat } from "./aliveBeat.js";
import { type Logger, silentLogger } from "./logger.js";
import { type RedisWatch, watchRedis } from "./redisWatch.js";

/**
 * What a coordinator and a tool worker start from: their options of the same names, with
 * their defaults already applied (`resolveCoordinatorOptions`, `resolveToolWorkerOptions`).
 */
export interface ProcessRuntimeOptions extends RedisConnectionOptions {
  prefix: string;
  /**
   * The process's id (its BullMQ worker name).
   * @defaultValue `<hostname>-<pid>`
   */
  id?: string;
  logger?: Logger;
  /** BullMQ job lock; a process silent this long is considered dead. */
  lockDurationMs: number;
  /** How often BullMQ looks for stalled jobs. */
  stalledIntervalMs: number;
  /** How long the process counts as alive after a heartbeat (`YIEM_ALIVE_TTL_MS`); 0: no heartbeat. */
  aliveTtlMs: number;
}

/** A cluster process's connections and identity, shared by everything the process runs. */
export interface ProcessRuntime {
  id: string;
  keys: ClusterKeys;
  /** The command connection (BullMQ duplicates it for its blocking reads). */
  command: RedisClient;
  /** A connection that only subscribes: the control channel, and what else the process listens to. */
  subscriber: RedisClient;
  /** Reachability of `command`, each change logged once; stop it before closing on purpose. */
  watch: RedisWatch;
  log: Logger;
  /** The job lock, as in `workerOptions`. */
  lockDurationMs: number;
  /**
   * This start's life (see `state/processLives.ts`): kept alive by the heartbeat thread and
   * named by every token the process takes (`token`, `stampWorker`).
   */
  lifeId: string;
  /** The heartbeat: stop it last, once the process holds no lock and no lease. */
  alive: AliveBeat;
  /** A new lock or lease token naming this life (`holderToken`), after `prefix` when given. */
  token(prefix?: string): string;
  /**
   * Makes the lock tokens of a BullMQ worker with a processor name this life (its tokens are
   * `<worker id>:<n>`): call right after `new Worker(...)`, before it takes a job.
   */
  stampWorker(worker: Worker): void;
  /**
   * The BullMQ worker options every queue worker of the process shares: the connection,
   * prefix, lock, stalled check and name. A stalled job is always handed out again (a stall
   * is a dead process; a tool's own retries are counted per call).
   */
  workerOptions: WorkerOptions;
  /**
   * Logs a BullMQ worker's errors: outages at debug (the watch reports them once), others at
   * warn; and, for a `SafeTakeWorker`, the jobs it handed back after a lost take.
   */
  logWorkerErrors(worker: Worker, message: string, fields?: Record<string, unknown>): void;
  /**
   * Calls `onAbort` with the session of each abort on the control channel, and
   * `onToolsChanged` (when given) with the worker of each change of announced tools;
   * resolves once subscribed.
   */
  listenForControl(handlers: ControlHandlers): Promise<void>;
}

/** What a process does with the control channel's messages (`listenForControl`). */
export interface ControlHandlers {
  onAbort: (sessionId: string) => void;
  onToolsChanged?: (workerId: string) => void;
}

/** Logs, at warn, the jobs `worker` hands back after a take whose reply was lost. */
function logHandedBack(
  worker: SafeTakeWorker<unknown, unknown>,
  log: Logger,
  fields: Record<string, unknown>,
): void {
  worker.onHandedBack = (jobIds) =>
    log.warn(
      { queue: worker.name, jobs: jobIds, ...fields },
      "handed back the jobs a take lost with its reply (the connection dropped)",
    );
}

/** A process's id: `given`, or `<hostname>-<pid>`. */
export function processIdOf(given?: string): string {
  return given ?? `${hostname()}-${process.pid}`;
}

/**
 * Starts what a coordinator and a tool worker both run on: the key layout, the command
 * connection (retrying commands through outages) and its watch, a subscriber connection,
 * both logging their errors at debug level while they reconnect by themselves, the process id
 * (`<hostname>-<pid>` unless given), the BullMQ worker options, and the heartbeat of this
 * start's life (`startAliveBeat`: every coordinator and worker beats, however started).
 * Connects in the background; never throws.
 *
 * @example const runtime = startProcessRuntime({ redis: "redis://127.0.0.1:6379", prefix: "yiem", lockDurationMs: 30_000, stalledIntervalMs: 30_000, aliveTtlMs: 1500 });
 */
export function startProcessRuntime(options: ProcessRuntimeOptions): ProcessRuntime {
  const keys = clusterKeys(options.prefix, keyLayoutOf(options.redis, options.shards));
  const log = options.logger ?? silentLogger;
  const id = processIdOf(options.id);
  const command = connectRedis(options.redis, DURABLE_CONNECTION);
  const watch = watchRedis(command, { log, target: describeRedisTarget(options.redis) });
  warnOnOldRedis(command, log);
  // No ready check on the subscriber: ioredis (5.8.2 on, its issue 2037) may send the check's
  // INFO after the first SUBSCRIBE when several are sent while it connects, which fails the
  // start with "Connection in subscriber mode" (seen once in a clean-clone CI run).
  const subscriber = duplicateConnection(command, { enableReadyCheck: false });
  for (const connection of [command, subscriber]) {
    connection.on("error", (err: Error) =>
      log.debug({ err: err.message }, "redis connection error (reconnecting)"),
    );
  }
  const { lockDurationMs } = options;
  const lifeId = newLifeId();
  const alive = startAliveBeat({
    redis: options.redis,
    keys,
    command,
    lifeId,
    ttlMs: options.aliveTtlMs,
    log,
  });
  return {
    id,
    keys,
    command,
    subscriber,
    watch,
    log,
    lockDurationMs,
    lifeId,
    alive,
    token: (prefix) => holderToken(lifeId, prefix),
    stampWorker(worker) {
      // BullMQ makes each job's lock token from the worker's id, which it sets to a UUID once.
      (worker as { id: string }).id = holderToken(lifeId);
    },
    workerOptions: {
      connection: command,
      prefix: keys.bullPrefix,
      lockDuration: lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: 1000,
      name: id,
    },
    logWorkerErrors(worker, message, fields = {}) {
      if (worker instanceof SafeTakeWorker) logHandedBack(worker, log, fields);
      worker.on("error", (err) =>
        log[isConnectionError(err) ? "debug" : "warn"]({ err: err.message, ...fields }, message),
      );
    },
    async listenForControl({ onAbort, onToolsChanged }) {
      subscriber.on("message", (channel: string, text: string) => {
        if (channel !== keys.controlChannel) return;
        const message = parseControlMessage(text);
        if (message?.type === "abort") onAbort(message.sessionId);
        if (message?.type === "toolsChanged") onToolsChanged?.(message.workerId);
      });
      await subscriber.subscribe(keys.controlChannel);
    },
  };
}
