import { randomUUID } from "node:crypto";
import { type RedisClient as BullClient, type Job, type Span, Worker } from "bullmq";
import { type LeanTake, type TakeClaim, type TakenJob, takeJobLean } from "./leanTake.js";
import type { RedisClient } from "./redisConnection.js";
import { withScripts } from "./scripts.js";

/** A connection whose drops a `SafeTakeWorker` counts (ioredis `Redis` or `Cluster`). */
type Watchable = BullClient & {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  nodes?: () => Array<{ on(event: string, listener: () => void): unknown }>;
};

/** The part of BullMQ's `Worker` state a lean take sets (private there, not typed). */
interface TakeInternals {
  /** The queue was found empty: the loop's next take waits for a marker first. */
  drained: boolean;
  /** Sets the rate limit's end and the time to wait for a marker until (BullMQ's reply). */
  updateDelays(limitDelay?: number, delayUntil?: number): void;
}

/** What a lean take found of the field its worker claims (`SafeTakeWorker.claimsOnTake`). */
export interface ClaimAtTake {
  /** The field's value in the job's hash after the take. */
  value: string;
  /** Whether this take wrote it (the value it proposed), rather than finding it there. */
  fresh: boolean;
}

/** The claims of jobs handed out by lean takes (`claimAtTake`). */
const claimsAtTake = new WeakMap<Job, ClaimAtTake>();

/**
 * What the lean take of `job` found of its worker's claimed field (`SafeTakeWorker.claimsOnTake`):
 * `undefined` when the field is not claimed on take, the take was BullMQ's, or the job's hash
 * holds no value (it names a session of its own).
 */
export function claimAtTake(job: Job): ClaimAtTake | undefined {
  return claimsAtTake.get(job);
}

/**
 * A BullMQ `Worker` whose takes survive a lost reply. Redis can run a take (BullMQ's
 * `moveToActive`, or the take that follows finishing a job) and then lose the connection
 * before the reply arrives; ioredis sends the command again once it reconnects, and that
 * second take moves another job, or none. The job the first one took stays active under a
 * token the worker never saw, held by no one, until its lock runs out (`YIEM_LOCK_MS`, 30 s)
 * and a stalled check hands it out (30 s more). Here, a take during which the connection
 * dropped hands back, at once, every active job locked with the take's token but the one it
 * returned (`releaseLostTakes-7.lua`), its take undone: not a stall, since no one ran it.
 *
 * Never hands back a job the worker holds (its token is the take's own, and the returned job
 * is kept); costs nothing while the connection stays up.
 *
 * With `takesLean`, a take (`moveToActive`) is Yiem's `takeJobLean` where the queue is plain:
 * BullMQ's take, but the queue's marker is added only when jobs still wait, and when none do
 * the worker is marked drained (a `drained` event), so its loop's next take first blocks on
 * the marker (`BZPOPMIN`), where BullMQ's loop takes again at once and finds nothing (an
 * empty take of 7 commands), and a worker blocked on the marker is not woken for it either.
 * Where the queue is not plain the take is BullMQ's (one more round trip, for the script that
 * found so). `jobsLeft` says what the last take found.
 *
 * A lean take may take several jobs at once (`takeCount`, one unless a subclass says more): the
 * first is returned, the others are kept, locked with their own tokens, and handed out by the
 * next takes without asking Redis (the loop starts each at once: a subclass takes no more than
 * it has free slots for). A worker closing or pausing hands back the jobs it holds ahead, their
 * takes undone (`releaseLostTakes-7.lua`); a worker killed holding them leaves them to the
 * failure detector, as it leaves the jobs it runs (their tokens name its life).
 *
 * @example const worker = new SafeTakeWorker("coordinator", undefined, { connection });
 */
export class SafeTakeWorker<DataType, ResultType> extends Worker<DataType, ResultType> {
  /** Connection drops seen so far, per watched connection. */
  private readonly drops = new WeakMap<object, { count: number }>();

  /** Told the ids of the jobs handed back after a lost take (to log them). */
  onHandedBack: ((jobIds: string[]) => void) | undefined;

  /** Whether takes go through `takeJobLean` (see above): set it where the queue is plain. */
  takesLean = false;

  /**
   * A field of the job's hash each lean take claims with a new random value (`TakeClaim`), read
   * back with `claimAtTake`: the coordinator queue's session of a job naming none.
   */
  claimsOnTake: string | undefined;

  /**
   * What the last take said of the queue: `false` when it left no job waiting, `true` when it
   * left some, `undefined` when BullMQ's take ran (it does not say).
   */
  jobsLeft: boolean | undefined;

  /** Jobs a lean take took after the one it returned, handed out by the next takes. */
  private readonly takenAhead: TakenJob[] = [];

  /** Whether the take that filled `takenAhead` left jobs waiting in the queue. */
  private moreAfterAhead = false;

  /** How many jobs the next lean take may take (one here; see the class comment). */
  protected takeCount(): number {
    return 1;
  }

  protected override async moveToActive(
    client: BullClient,
    token: string,
    name?: string,
  ): Promise<Job<DataType, ResultType>> {
    const ahead = this.takenAhead.shift();
    if (ahead) return this.handOutAhead(ahead);
    return this.guardTake(client, token, async () => {
      const count = this.closing || this.paused ? 1 : this.takeCount();
      const claim = this.claimOf(count);
      const taken = this.takesLean
        ? await takeJobLean(this, client, token, name, count, claim)
        : undefined;
      this.jobsLeft = taken?.more;
      if (!taken) return super.moveToActive(client, token, name);
      const internals = this as unknown as TakeInternals;
      internals.updateDelays(0, taken.delayUntil);
      this.keepAhead(client, taken, claim);
      const job = await this.nextJobFromJobData(taken.jobData, taken.jobId, token);
      this.noteClaim(job, taken.jobData, claim?.proposed[0]);
      if (job && !this.jobsLeft) this.markDrained(internals);
      return job;
    });
  }

  /** The claim of a take of up to `count` jobs: a new random value for each. */
  private claimOf(count: number): TakeClaim | undefined {
    const field = this.claimsOnTake;
    if (!field) return undefined;
    return { field, proposed: Array.from({ length: count }, () => randomUUID()) };
  }

  /** Records what the take of `job` found of the claimed field (`claimAtTake`). */
  private noteClaim(job: Job | undefined, jobData: unknown, proposed: string | undefined): void {
    const field = this.claimsOnTake;
    if (!job || !field || !jobData) return;
    const value = (jobData as Record<string, unknown>)[field];
    if (typeof value === "string") claimsAtTake.set(job, { value, fresh: value === proposed });
  }

  /**
   * Keeps the further jobs of `taken` to hand out next (`jobsLeft` true while any is kept), or,
   * when the worker is closing or paused by now, hands them back at once.
   */
  private keepAhead(client: BullClient, taken: LeanTake, claim?: TakeClaim): void {
    for (const [n, further] of taken.further.entries()) further.proposed = claim?.proposed[n + 1];
    if (taken.further.length === 0) return;
    if (this.closing || this.paused) {
      void this.handBackTakenAhead(client, taken.further);
      return;
    }
    this.takenAhead.push(...taken.further);
    this.moreAfterAhead = taken.more;
    this.jobsLeft = true;
  }

  /** Hands out a job taken ahead, as its take would have: the drained mark after the last. */
  private async handOutAhead(ahead: TakenJob): Promise<Job<DataType, ResultType>> {
    this.jobsLeft = this.takenAhead.length > 0 || this.moreAfterAhead;
    const job = await this.nextJobFromJobData(ahead.jobData, ahead.jobId, ahead.token);
    this.noteClaim(job, ahead.jobData, ahead.proposed);
    if (!this.jobsLeft) this.markDrained(this as unknown as TakeInternals);
    return job;
  }

  /**
   * BullMQ's `pause`, after handing back the jobs taken ahead: their locks are not renewed
   * while they wait, so a stalled check could hand them to another worker meanwhile.
   */
  override async pause(doNotWaitActive?: boolean): Promise<void> {
    await this.handBackTakenAhead(await this.client, this.takenAhead.splice(0));
    return super.pause(doNotWaitActive);
  }

  /** BullMQ's `close`, after handing back the jobs taken ahead (no one would start them). */
  override async close(force = false): Promise<void> {
    if (!this.closing && this.takenAhead.length > 0)
      await this.handBackTakenAhead(await this.client, this.takenAhead.splice(0));
    return super.close(force);
  }

  /**
   * Marks the worker drained after a take that left no job waiting, as BullMQ's loop would after
   * the empty take that follows it (`drained` emitted once, as BullMQ emits it).
   */
  private markDrained(internals: TakeInternals): void {
    if (internals.drained) return;
    internals.drained = true;
    this.emit("drained");
  }

  protected override async handleCompleted(
    result: ResultType,
    job: Job<DataType, ResultType>,
    token: string,
    fetchNextCallback?: () => boolean,
    span?: Span,
  ): Promise<Job<DataType, ResultType>> {
    const client = await this.client;
    return this.guardTake(client, token, () =>
      super.handleCompleted(result, job, token, fetchNextCallback, span),
    );
  }

  protected override async handleFailed(
    err: Error,
    job: Job<DataType, ResultType>,
    token: string,
    fetchNextCallback?: () => boolean,
    span?: Span,
  ): Promise<Job<DataType, ResultType>> {
    const client = await this.client;
    return this.guardTake(client, token, () =>
      super.handleFailed(err, job, token, fetchNextCallback, span),
    );
  }

  /** Runs a take; if `client` dropped meanwhile, hands back what the take lost. */
  private async guardTake(
    client: BullClient,
    token: string,
    take: () => Promise<Job<DataType, ResultType> | undefined>,
  ): Promise<Job<DataType, ResultType>> {
    const drops = this.watchDrops(client);
    const before = drops.count;
    let taken: Job<DataType, ResultType> | undefined;
    try {
      taken = await take();
      return taken as Job<DataType, ResultType>;
    } finally {
      if (drops.count !== before) {
        const kept = [taken?.id, ...this.takenAhead.map((ahead) => ahead.jobId)];
        await this.handBackLostTakes(
          client,
          token,
          kept.filter((id) => id !== undefined),
        );
      }
    }
  }

  /** Counts the drops of `client` (and of each node of a cluster), from now on. */
  private watchDrops(client: BullClient): { count: number } {
    const known = this.drops.get(client);
    if (known) return known;
    const drops = { count: 0 };
    this.drops.set(client, drops);
    const watchable = client as Watchable;
    const count = () => {
      drops.count++;
    };
    watchable.on("close", count);
    if (typeof watchable.nodes === "function") {
      for (const node of watchable.nodes()) node.on("close", count);
      watchable.on("+node", (node: unknown) => (node as Watchable).on("close", count));
    }
    return drops;
  }

  /**
   * Hands back the active jobs locked with `token` (or `<token>/<n>`) but those in `keep`, and
   * tells `onHandedBack` of them unless `quietly` (jobs taken ahead, handed back on a close).
   * Never throws: errors are emitted.
   */
  private async handBackLostTakes(
    client: BullClient,
    token: string,
    keep: string[] = [],
    quietly = false,
  ): Promise<void> {
    const k = this.keys;
    try {
      const released = await withScripts(client as unknown as RedisClient).yiemReleaseLostTakes(
        ...([k.active, k.wait, k.stalled, k.meta, k.paused, k.marker, k.events] as string[]),
        this.toKey(""),
        token,
        ...keep,
      );
      if (released.length > 0 && !quietly) this.onHandedBack?.(released);
    } catch (err) {
      // A worker closing closes its connection under a take in flight: nothing to hand back by
      // then; what the take held waits for its lock to run out, or for its process's life to
      // be found dead once the process is gone.
      if (!this.closing) this.emit("error", err as Error);
    }
  }

  /** Hands back jobs taken ahead and never started, each by its own token. Never throws. */
  private async handBackTakenAhead(client: BullClient, jobs: TakenJob[]): Promise<void> {
    await Promise.all(jobs.map((job) => this.handBackLostTakes(client, job.token, [], true)));
  }
}
