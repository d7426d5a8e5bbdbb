/** A replay stream's newest entry: its event number and the running total of event bytes. */
interface Tail {
  seq: number;
  total: number;
}

/** A batch that stores events, sent on the connection and not answered yet. */
export interface SentEvents {
  /** The session's record when it was sent (a record forgotten since ignores its reply). */
  readonly of: SessionTail;
  /** The stored events' JSON texts (without `seq`), in order. */
  readonly stored: readonly string[];
}

/** What one connection knows of one session's stream. */
interface SessionTail {
  /** The newest entry after the last answered batch, when that batch's reply said it. */
  answered: Tail | undefined;
  /** Batches sent after it, in order, not answered yet. */
  inFlight: SentEvents[];
}

/** How many sessions a connection remembers (the oldest used is forgotten past it). */
const MAX_SESSIONS = 10_000;

/** `{"seq":` and `,`: what a script adds to an event's JSON, besides the number's digits and less its `{`. */
const SEQ_FRAME_BYTES = 7;

/**
 * The newest entry of each session's replay stream as this connection's own writes left it,
 * so a batch of events tells its script what to number from (`appendEvent.lib.lua`: a guess,
 * proved by the first event's `XADD`) instead of the script reading it (`XREVRANGE`). It is
 * the last reply that gave it, moved on by every batch sent since (their events numbered in
 * turn, their bytes added as the script adds them). A guess is never higher than the stream
 * unless a batch sent was lost: a failed batch forgets the session, as does the end of a run
 * (`forget`), so a session no one writes any more costs nothing here. Never talks to Redis.
 */
export class StreamTails {
  private readonly sessions = new Map<string, SessionTail>();

  /**
   * The guess (`<seq>:<total>`, or '' when unknown) for a batch of `sessionId` about to be
   * sent, and the batch, recorded as sent when it stores events (`stored`).
   */
  send(sessionId: string, stored: readonly string[]): { guess: string; sent?: SentEvents } {
    const of = this.recordOf(sessionId);
    const guess = guessOf(of);
    if (stored.length === 0) return { guess };
    const sent: SentEvents = { of, stored };
    of.inFlight.push(sent);
    return { guess, sent };
  }

  /** The guess for a script of `sessionId` that stores events outside a batch (the run's close). */
  guess(sessionId: string): string {
    const of = this.sessions.get(sessionId);
    return of ? guessOf(of) : "";
  }

  /**
   * Believes `sessionId`'s stream holds no event yet (a session whose transcript is empty, at
   * its first run's opening), unless something is known of it: its first batch then guesses
   * `0:0` and its script reads nothing. A wrong belief costs one refused `XADD` and the read
   * the script would have made anyway (`appendEvent.lib.lua`): a guess is never too high.
   */
  believeEmpty(sessionId: string): void {
    if (this.sessions.has(sessionId)) return;
    this.recordOf(sessionId).answered = { seq: 0, total: 0 };
  }

  /** `sent`'s reply: the stream's newest entry after it (`seq`, `total`). */
  answered(sent: SentEvents, seq: number, total: number): void {
    const at = sent.of.inFlight.indexOf(sent);
    if (at < 0) return; // forgotten, or a later batch answered first
    sent.of.inFlight.splice(0, at + 1);
    sent.of.answered = { seq, total };
  }

  /** `sent` failed: what it stored is unknown, so the session is guessed no more until a reply says. */
  failed(sent: SentEvents): void {
    const at = sent.of.inFlight.indexOf(sent);
    if (at >= 0) sent.of.inFlight.splice(0, at + 1);
    sent.of.answered = undefined;
  }

  /** Forgets `sessionId` (its run closed): replies of its batches still in flight are ignored. */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private recordOf(sessionId: string): SessionTail {
    const known = this.sessions.get(sessionId);
    if (known) {
      this.sessions.delete(sessionId); // most recently used last
      this.sessions.set(sessionId, known);
      return known;
    }
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    const made: SessionTail = { answered: undefined, inFlight: [] };
    this.sessions.set(sessionId, made);
    return made;
  }
}

/** The answered tail moved on by the batches in flight, as `<seq>:<total>`; '' when unknown. */
function guessOf(of: SessionTail): string {
  if (!of.answered) return "";
  let { seq, total } = of.answered;
  for (const sent of of.inFlight) {
    for (const json of sent.stored) {
      seq += 1;
      total += Buffer.byteLength(json) + SEQ_FRAME_BYTES + String(seq).length;
    }
  }
  return `${seq}:${total}`;
}
