import { type RedisClient as BullClient, type Job, type Span, Worker } from "bullmq";
import { takeJobLean } from "./leanTake.js";
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
   * What the last take said of the queue: `false` when it left no job waiting, `true` when it
   * left some, `undefined` when BullMQ's take ran (it does not say).
   */
  jobsLeft: boolean | undefined;

  protected override async moveToActive(
    client: BullClient,
    token: string,
    name?: string,
  ): Promise<Job<DataType, ResultType>> {
    return this.guardTake(client, token, async () => {
      const taken = this.takesLean ? await takeJobLean(this, client, token, name) : undefined;
      this.jobsLeft = taken?.more;
      if (!taken) return super.moveToActive(client, token, name);
      const internals = this as unknown as TakeInternals;
      internals.updateDelays(0, taken.delayUntil);
      const job = await this.nextJobFromJobData(taken.jobData, taken.jobId, token);
      if (job && !taken.more) this.markDrained(internals);
      return job;
    });
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
      if (drops.count !== before) await this.handBackLostTakes(client, token, taken?.id);
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

  /** Hands back the active jobs locked with `token` but `keep`. Never throws: errors are emitted. */
  private async handBackLostTakes(client: BullClient, token: string, keep?: string): Promise<void> {
    const k = this.keys;
    try {
      const released = await withScripts(client as unknown as RedisClient).yiemReleaseLostTakes(
        ...([k.active, k.wait, k.stalled, k.meta, k.paused, k.marker, k.events] as string[]),
        this.toKey(""),
        token,
        keep ?? "",
      );
      if (released.length > 0) this.onHandedBack?.(released);
    } catch (err) {
      this.emit("error", err as Error);
    }
  }
}
