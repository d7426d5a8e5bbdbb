import { LeaseLostError, SessionStoreError } from "../protocol/errors.js";
import { NOT_AS_EXPECTED, type NotAsExpected } from "./sessionStore.js";

/**
 * One fenced write of the session store, given the transcript length it must find (or
 * `undefined`: no guard) and the length the run knows (`knownLength`, a hint an append may
 * take to skip its read: never a guard): its result; `false` or `undefined` when the lease is
 * lost; `NOT_AS_EXPECTED` when the guard refused it (nothing written).
 */
export type GuardedWrite<T> = (
  expectLength: number | undefined,
  knownLength: number,
) => Promise<T | NotAsExpected | false | undefined>;

/**
 * Runs a store write; a Redis failure becomes `SessionStoreError`, a fenced-off write
 * `LeaseLostError`.
 */
async function writeFenced<T>(
  sessionId: string,
  write: () => Promise<T | undefined | false>,
): Promise<T> {
  let result: T | undefined | false;
  try {
    result = await write();
  } catch (err) {
    throw new SessionStoreError(sessionId, err);
  }
  if (result === undefined || result === false) throw new LeaseLostError(sessionId);
  return result;
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/**
 * A run's transcript writes, where a batch's tool results are appended without waiting for
 * Redis's reply (`appendBehind`): the run's next write is sent right behind the append, and
 * both replies are awaited together, so a turn costs one round trip fewer. The next write
 * carries the transcript length it expects; if the append did not land (a lost lease, a Redis
 * error) that write changes nothing, and it throws what the append would have thrown. So no
 * write ever lands after an append that did not, and a failure surfaces at the next write
 * instead of at the append. `length()` is the transcript's length as the run knows it:
 * call `appendBehind` before adding the messages to it.
 *
 * @example
 * const transcript = new PipelinedTranscript(sessionId, () => state.messages.length);
 * transcript.appendBehind((expect) => store.appendMany(sessionId, token, results, expect));
 * state.messages.push(...results);
 * const drained = await transcript.write((expect) => store.drainInputs(sessionId, token, expect));
 */
export class PipelinedTranscript {
  private pending: Promise<unknown> | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly length: () => number,
  ) {}

  /** Sends an append and returns at once; the next `write` or `settle` reports its outcome. */
  appendBehind(append: GuardedWrite<boolean>): void {
    const sent = this.write(append);
    sent.catch(() => undefined); // its failure is thrown by the next write
    this.pending = sent;
  }

  /**
   * Runs a fenced write. Behind a pending append, it goes out at once, guarded, and resolves
   * when both replies are in: it throws the append's error if the append failed, and writes
   * again unguarded if its guard refused it although the append landed.
   */
  async write<T>(write: GuardedWrite<T>): Promise<T> {
    const before = this.pending;
    this.pending = undefined;
    if (!before) return this.unguarded(write);
    const sent = settle(writeFenced(this.sessionId, () => write(this.length(), this.length())));
    const earlier = await settle(before);
    const outcome = await sent;
    if (!earlier.ok) throw earlier.error;
    if (!outcome.ok) throw outcome.error;
    if (outcome.value === NOT_AS_EXPECTED) return this.unguarded(write);
    return outcome.value;
  }

  /** Waits for a pending append; throws what it failed with. Never waits when none is pending. */
  async settle(): Promise<void> {
    const before = this.pending;
    this.pending = undefined;
    await before;
  }

  private async unguarded<T>(write: GuardedWrite<T>): Promise<T> {
    const value = await writeFenced(this.sessionId, () => write(undefined, this.length()));
    if (value === NOT_AS_EXPECTED)
      throw new SessionStoreError(this.sessionId, new Error("an unguarded write was refused"));
    return value;
  }
}
