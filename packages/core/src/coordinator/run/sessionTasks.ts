import type { Logger } from "../../ops/logger.js";
import { redisBackoffMs } from "../../redis/redisBackoff.js";
import { anyError, retryTransient } from "../../redis/retryTransient.js";
import type { ResponseWaits } from "../../state/responseWaits.js";
import type { RunSlots, Slot } from "../intake/runSlots.js";
import {
  type FreshSession,
  processSession,
  type SessionControl,
  type SessionOutcome,
  type SessionRunnerDeps,
} from "./sessionRunner.js";

/** How many watched sessions one round of the orphan check reads at once. */
const WATCH_ROUND = 500;

/** What the session tasks of one coordinator share. */
export interface SessionTasksOptions {
  deps: SessionRunnerDeps;
  slots: RunSlots;
  answers: ResponseWaits;
  coordinatorId: string;
  /** A new lease token naming this coordinator's life (`holderToken`). */
  token(): string;
  log: Logger;
  /**
   * Denies the calls awaiting approval of a parked run found aborted (`parkedAborted`), which
   * resumes it: here, or on the coordinator that records the last denial.
   */
  abortParkedRun: (sessionId: string) => Promise<void>;
  /**
   * The failure detector's word on lease holders (`coordinator/failureDetector.ts`): a
   * session leased by a life found dead is taken over at once, not when its lease runs out.
   */
  deaths?: DeathNotices;
}

/**
 * A take of a session's lease sent ahead of `ensureRunning` (`SessionTasks.takeEarly`), right
 * behind a command of the session, so that both go out in one round trip.
 */
export interface EarlyTake {
  token: string;
  /** Whether the lease was free and is now this token's. */
  acquired: Promise<boolean>;
}

/** What `SessionTasks` asks the failure detector. */
export interface DeathNotices {
  /** Whether any life is known dead now. */
  knowsDeaths(): boolean;
  /** Whether lease token `token` names a life found dead. */
  holderIsDead(token: string): boolean;
}

/**
 * The sessions this coordinator runs: at most one task per session, each holding a run slot
 * and the session's lease while it works the session's runs. A task whose Redis writes fail
 * (OOM, a reset connection, a failover) keeps its session and tries again with backoff, so
 * no run is left open with nothing behind it. Sessions that this coordinator waits on but
 * another holds are checked every `watchMs`: when their holder is gone, this coordinator
 * takes them over.
 */
export class SessionTasks {
  /** The sessions held now, each with its control (for aborts and hand-over). */
  readonly held = new Map<string, SessionControl>();
  private readonly running = new Map<string, Promise<void>>();
  private watch: NodeJS.Timeout | undefined;
  /** A check of the watched sessions is going on. */
  private checking = false;
  /** Another check was asked for while one was going on. */
  private checkAgain = false;
  private closing = false;

  constructor(private readonly options: SessionTasksOptions) {}

  /** Checks the watched sessions every `watchMs`. */
  startWatching(watchMs: number): void {
    this.watch = setInterval(() => void this.takeOverOrphans(), watchMs);
  }

  /**
   * Makes sure the session is being worked: by a task of this coordinator (started now when
   * its lease is free, with `slot` or a free one), or by another coordinator (then this one
   * watches it). Gives `slot` back when it is not used. Never throws.
   */
  async ensureRunning(sessionId: string, slot?: Slot, early?: EarlyTake): Promise<void> {
    const taken = slot ?? this.options.slots.tryTake();
    if (!taken || this.closing || this.running.has(sessionId)) {
      if (early) void this.dropLease(sessionId, early.token, early.acquired);
      return taken?.release();
    }
    const token = early?.token ?? this.options.token();
    const acquired = await this.take(sessionId, token, early?.acquired).catch(() => false);
    if (!acquired) return taken.release();
    if (this.running.has(sessionId)) {
      // Its task let the lease go and is ending: ours must not stay behind unused.
      void this.dropLease(sessionId, token, Promise.resolve(true));
      return taken.release();
    }
    this.startTask(sessionId, token, taken);
  }

  /** Works `sessionId` with lease token `token` in `slot` as this coordinator's task for it. */
  private startTask(sessionId: string, token: string, slot: Slot, fresh?: FreshSession): void {
    const task = this.work(sessionId, token, slot, fresh).then(
      (outcome) => this.ended(sessionId, slot, outcome),
      () => this.ended(sessionId, slot, undefined),
    );
    this.running.set(sessionId, task);
  }

  /**
   * Sends the take of `sessionId`'s lease now, where `ensureRunning` with a run slot would take
   * it (no task of this coordinator works the session, and it is not closing): right behind the command just
   * sent for the session (the input's record), so both go out in one round trip. Its outcome
   * must go to `ensureRunning` (which lets the lease go if it cannot use it); `undefined` when
   * `ensureRunning` would not take the lease.
   */
  takeEarly(sessionId: string): EarlyTake | undefined {
    if (this.closing || this.running.has(sessionId)) return undefined;
    const token = this.options.token();
    const { deps } = this.options;
    const acquired = deps.store.acquireFree(sessionId, token, deps.leaseMs);
    acquired.catch(() => undefined); // `ensureRunning` reads it
    return { token, acquired };
  }

  /**
   * Starts working `sessionId`, a session this coordinator just made for a request naming none
   * (no transcript, no holder, `agent` its agent), right behind the command just sent for it
   * (the input's record): the take of its lease and the opening of its run go out with that
   * command, one round trip for all, and the hold reads nothing (`FreshSession`). The task
   * keeps `slot`. `false`, having sent nothing, where `ensureRunning` would not start one
   * (closing, or a task works the session already): the caller goes on as without it.
   */
  startFresh(sessionId: string, slot: Slot, agent: string): boolean {
    if (this.closing || this.running.has(sessionId)) return false;
    const token = this.options.token();
    const { deps } = this.options;
    // Not waited for: the run's opening, sent behind it, is refused unless the take landed.
    deps.store.acquireFree(sessionId, token, deps.leaseMs).catch(() => undefined);
    this.startTask(sessionId, token, slot, { agent });
    return true;
  }

  /** Lets go of an early take (`takeEarly`) that `ensureRunning` will not be given. */
  letGo(sessionId: string, early: EarlyTake): void {
    void this.dropLease(sessionId, early.token, early.acquired);
  }

  /** Lets go of a lease taken for a session this coordinator does not work after all. */
  private async dropLease(sessionId: string, token: string, acquired: Promise<boolean>) {
    if (!(await acquired.catch(() => false))) return;
    await this.options.deps.store.release(sessionId, token).catch(() => undefined);
    // An input that arrived meanwhile must not wait for the watch.
    if (this.options.answers.hasWaitsIn(sessionId)) void this.ensureRunning(sessionId);
  }

  /**
   * Looks at the watched sessions now (some holder was found dead): a check going on is
   * followed by another.
   */
  checkWatchedNow(): void {
    if (this.checking) this.checkAgain = true;
    else void this.takeOverOrphans();
  }

  /**
   * Takes the session's lease: when it is free (`sent`: that take, sent already), or from a
   * holder the failure detector found dead (a new token, which fences the dead holder's
   * writes out).
   */
  private async take(sessionId: string, token: string, sent?: Promise<boolean>): Promise<boolean> {
    const { deps, deaths, log } = this.options;
    // A new token is never the holder's: a lease that is not free is not ours to renew.
    if (await (sent ?? deps.store.acquireFree(sessionId, token, deps.leaseMs))) return true;
    if (!deaths?.knowsDeaths()) return false;
    const holder = await deps.store.leaseHolder(sessionId);
    if (holder === null) return deps.store.acquire(sessionId, token, deps.leaseMs);
    if (!deaths.holderIsDead(holder)) return false;
    const taken = await deps.store.takeOver(sessionId, holder, token, deps.leaseMs);
    if (taken) log.warn({ sessionId, holder }, "took over a session whose holder is dead");
    return taken;
  }

  /**
   * Stops starting sessions, lets running ones finish for up to `graceMs`, then hands the
   * rest over (their runs stay open for the next holder) and waits for them to stop.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    clearInterval(this.watch);
    const all = () => Promise.all(this.running.values());
    const timer = setTimeout(() => {
      this.options.log.info({ sessions: this.held.size }, "handing over the sessions still held");
      for (const control of this.held.values()) void control.handOver();
    }, graceMs);
    await all();
    clearTimeout(timer);
  }

  private async work(
    sessionId: string,
    token: string,
    slot: Slot,
    fresh?: FreshSession,
  ): Promise<SessionOutcome | undefined> {
    const { deps, log } = this.options;
    const register = (control: SessionControl | undefined) => {
      if (control) this.held.set(sessionId, control);
      else this.held.delete(sessionId);
    };
    // After a failure the session is taken again first: it may have moved on meanwhile.
    const workOnce = async (attempt: number): Promise<SessionOutcome | undefined> => {
      if (attempt === 0) return processSession(deps, sessionId, token, register, slot, fresh);
      if (this.closing) return undefined;
      if (!(await deps.store.acquire(sessionId, token, deps.leaseMs))) return undefined;
      return processSession(deps, sessionId, token, register, slot);
    };
    const outcome = await retryTransient(workOnce, {
      attempts: Number.POSITIVE_INFINITY,
      retryIf: anyError, // OOM, a reset connection, a failover: the run must not be left open
      backoffMs: (attempt) => redisBackoffMs(attempt + 1), // a whole session: 100 ms at first
      onRetry: (err, attempt) =>
        log.warn(
          { sessionId, err: (err as Error).message, attempt },
          "session interrupted by a Redis error; retrying",
        ),
    });
    if (outcome) log.debug({ sessionId, outcome }, "session released");
    return outcome;
  }

  private ended(sessionId: string, slot: Slot, outcome: SessionOutcome | undefined): void {
    this.running.delete(sessionId);
    slot.release();
    // A parked run waits for a decision: the decision (or the watch) resumes it.
    if (outcome === "parked") return;
    // An abort recorded while no one held it: its denials are the decisions that resume it.
    if (outcome === "parkedAborted") {
      void this.options.abortParkedRun(sessionId);
      return;
    }
    // Inputs that arrived while the task was letting go must not wait for the next watch tick.
    if (this.options.answers.hasWaitsIn(sessionId)) void this.ensureRunning(sessionId);
  }

  /**
   * Takes over the watched sessions whose holder is gone, `WATCH_ROUND` sessions at a time
   * (ten thousand runs parked for approval are watched too, and two commands each at once
   * would hold their replies in memory together and take the event loop for all of them);
   * a check still going when the next tick comes lets that tick pass. Never throws.
   */
  private async takeOverOrphans(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const watched = this.options.answers.sessions();
      for (let i = 0; i < watched.length && !this.closing; i += WATCH_ROUND)
        await this.takeOverRound(watched.slice(i, i + WATCH_ROUND));
    } finally {
      this.checking = false;
    }
    if (this.checkAgain && !this.closing) {
      this.checkAgain = false;
      await this.takeOverOrphans();
    }
  }

  private async takeOverRound(sessionIds: string[]): Promise<void> {
    const watched = sessionIds.filter((id) => !this.running.has(id));
    if (watched.length === 0) return;
    try {
      // A parked run (waiting for approvals) is left alone until a decision un-parks it.
      const deaths = this.options.deaths;
      const orphaned = await this.options.deps.store.needHolder(watched, (token) =>
        Boolean(deaths?.holderIsDead(token)),
      );
      for (const [i, sessionId] of watched.entries()) {
        if (orphaned[i]) await this.ensureRunning(sessionId);
      }
    } catch (err) {
      this.options.log.debug({ err: (err as Error).message }, "could not check watched sessions");
    }
  }
}
