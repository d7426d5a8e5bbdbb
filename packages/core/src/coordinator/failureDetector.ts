import { QueueKeys } from "bullmq";
import type { Logger } from "../ops/logger.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";
import { buryDeadLives, findDeadLives, type LifeGrace, lifeIdOf } from "../state/processLives.js";

/** Options of `startFailureDetector`. */
export interface FailureDetectorOptions {
  command: RedisClient;
  keys: ClusterKeys;
  log: Logger;
  /** How long a life counts as alive after its last heartbeat (`YIEM_ALIVE_TTL_MS`). */
  ttlMs: number;
  /** How often to look for dead lives (`YIEM_ALIVE_POLL_MS`). */
  pollMs: number;
  /** The BullMQ queues (names in the layout) whose jobs a process may hold. */
  queues(): Promise<string[]>;
  /** The workers' `maxStalledCount`: a job handed out again more often is failed by BullMQ. */
  maxStalledCount: number;
  /** Called when lives were found dead (here or by another coordinator): look at held sessions again. */
  onDeaths(): void;
  /** This process's own life: never taken for dead here (a coordinator woken from a stop looks before it beats). */
  ownLife: string;
  /**
   * When this process's own heartbeat last failed (`AliveBeat.lastRefusedAt`): Redis refused
   * or missed every process's beats alike then. Default: never.
   */
  ownBeatRefusedAt?: () => number;
}

/** A running failure detector. */
export interface FailureDetector {
  /** Whether `token` (a lock or lease token, `holderToken`) names a life found dead. */
  holderIsDead(token: string): boolean;
  /** Whether any life is known dead now (else no token needs a look). */
  knowsDeaths(): boolean;
  stop(): void;
}

/**
 * Hands out again, in each queue, the active jobs whose lock a dead life holds
 * (`releaseDeadLocks-7.lua`: BullMQ's stalled-job move, without waiting for the lock to run
 * out). Resolves with how many jobs moved.
 */
async function releaseDeadLocks(
  options: FailureDetectorOptions,
  lifeIds: string[],
): Promise<number> {
  const scripted = withScripts(options.command);
  const bull = new QueueKeys(options.keys.bullPrefix);
  let moved = 0;
  for (const name of await options.queues()) {
    const k = bull.getKeys(name);
    const released = await scripted.yiemReleaseDeadLocks(
      ...([k.active, k.wait, k.stalled, k.meta, k.paused, k.marker, k.events] as string[]),
      bull.toKey(name, ""),
      options.maxStalledCount,
      ...lifeIds,
    );
    if (released.length > 0)
      options.log.info(
        { queue: name, jobs: released, lives: lifeIds },
        "handed out the jobs of a dead process",
      );
    moved += released.length;
  }
  return moved;
}

/**
 * Whether Redis takes a heartbeat now: a write of the same kind as a beat (`ZADD` on the lives'
 * key, a no-op: only an existing member, only a greater score). Redis out of memory refuses
 * it, as it refuses every beat (the beat's script starts with that write), while the reads
 * and the first deleting writes of a look still go through: lives that expired meanwhile did
 * not die. Never throws.
 */
async function acceptsBeats(options: FailureDetectorOptions): Promise<boolean> {
  try {
    await options.command.zadd(options.keys.alive, "XX", "GT", 0, options.ownLife);
    return true;
  } catch (err) {
    options.log.warn(
      { err: (err as Error).message },
      "Redis refuses heartbeats; no process is taken for dead until they go through again",
    );
    return false;
  }
}

/** The grace of a look (`LifeGrace`): within a ttl of a reconnect all, of the start if Redis is young. */
function graceOf(withinTtl: boolean, reconnected: boolean): LifeGrace {
  if (!withinTtl) return "none";
  return reconnected ? "all" : "ifRedisIsYoung";
}

/**
 * Starts a coordinator's failure detector. Once at once (so a replacement coordinator finds its
 * killed predecessor while the rest of it starts, not a poll later), then every `pollMs`, it
 * asks Redis for lives whose
 * heartbeat ran out (`findDeadLives`: each coordinator and worker beats from a thread of its
 * own, `startAliveBeat`); for each, it hands out again the jobs it held in every queue (the
 * coordinator queue's requests, the decisions, the tool calls: BullMQ's stalled semantics,
 * counted as a stall, so a tool's `retries` apply as after its lock ran out), then marks it
 * dead. Sessions a dead coordinator leased are taken over by whoever next wants them
 * (`holderIsDead`, `SessionTasks`), told by `onDeaths` to look. So a dead process is noticed
 * within `ttlMs` + `pollMs`, where its locks (30 s) and leases (10 s) took up to a minute; they
 * stay as the safety net. One whose sockets closed (SIGKILL, a crash) is noticed sooner: once
 * its beats are two late, Redis holds no subscriber of its life's channel (`findDeadLives`).
 * A stopped process (SIGSTOP, a partition) looks dead alike: what it held is taken over, and its writes are fenced when it wakes (docs/RELIABILITY.md, "Failure
 * detector"). Never throws; a failed look is tried again at the next tick.
 *
 * @example const detector = startFailureDetector({ command, keys, log, ttlMs: 1500, pollMs: 250, queues, maxStalledCount: 1000, onDeaths });
 */
export function startFailureDetector(options: FailureDetectorOptions): FailureDetector {
  let dead = new Set<string>();
  let looking = false;
  // Redis away, no process could beat: the first ttl after reconnecting gives every life time.
  // The first ttl after this start does so only on a Redis up for less than a ttl (restarted).
  let readyAt = Date.now();
  let reconnectedSinceStart = false;
  options.command.on("ready", () => {
    readyAt = Date.now();
    reconnectedSinceStart = true;
  });
  // Redis refused a write lately (out of memory, a replica turned read-only): every process's
  // beat was refused alike, so for a ttl after that every life gets time, as after an outage.
  let refusedAt = Number.NEGATIVE_INFINITY;
  // The last refused beat: the look's probe's, or this process's own heartbeat's.
  const lastRefusal = () =>
    Math.max(refusedAt, options.ownBeatRefusedAt?.() ?? Number.NEGATIVE_INFINITY);
  const look = async () => {
    if (options.command.status !== "ready") return; // a look queued through an outage: none
    const sentAt = Date.now();
    const grace: LifeGrace =
      sentAt - lastRefusal() < options.ttlMs
        ? "all"
        : graceOf(sentAt - readyAt < options.ttlMs, reconnectedSinceStart);
    const found = await findDeadLives(options.command, options.keys, options.ttlMs, grace);
    // Reconnected while the look was on its way (it ran after an outage), or this process's own
    // beats failed or ran late meanwhile (a failover on a Redis Cluster: the look waited out
    // its redirections, and ran once the replica served the keys): the next look decides.
    const outageMeanwhile = readyAt > sentAt || lastRefusal() >= sentAt;
    found.expired = found.expired.filter((life) => life !== options.ownLife && !outageMeanwhile);
    if (found.expired.length > 0 && !(await acceptsBeats(options))) {
      refusedAt = Date.now();
      return;
    }
    const now = new Set([...found.expired, ...found.buried]);
    const fresh = [...now].some((life) => !dead.has(life));
    dead = now;
    if (found.expired.length > 0) {
      const moved = await releaseDeadLocks(options, found.expired);
      options.log.warn({ lives: found.expired, jobs: moved }, "processes found dead");
      await buryDeadLives(options.command, options.keys, found.expired);
    }
    if (fresh) options.onDeaths();
  };
  const tick = () => {
    if (looking) return;
    looking = true;
    look()
      .catch((err: unknown) =>
        options.log.debug({ err: (err as Error).message }, "could not look for dead processes"),
      )
      .finally(() => {
        looking = false;
      });
  };
  const timer = options.ttlMs > 0 ? setInterval(tick, options.pollMs) : undefined;
  // The first look: after the caller's synchronous start (its `onDeaths` target made).
  const first = options.ttlMs > 0 ? setImmediate(tick) : undefined;
  return {
    holderIsDead(token) {
      const life = lifeIdOf(token);
      return life !== undefined && dead.has(life);
    },
    knowsDeaths: () => dead.size > 0,
    stop: () => {
      clearInterval(timer);
      clearImmediate(first);
    },
  };
}
