import { nameOfScript } from "../redis/definedScripts.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";
import type { StreamCaps } from "./streamCaps.js";
import { type SentEvents, StreamTails } from "./streamTails.js";

/** How an event is sent: stored (numbered, in the replay stream) or live only (streamed text). */
export type EventKind = "stored" | "live";

/** One fenced transcript append queued in a batch (see `EventBatches.append`). */
export interface QueuedAppend {
  /** The lease token the append is fenced by. */
  token: string;
  /** The transcript length it expects before it, or '' for no guard. */
  expected: number | string;
  /** The transcript length before it as the caller knows it, or '' (a hint: never a guard). */
  known: number | string;
  /** Pairs: message JSON, tool call id or ''. */
  pairs: string[];
}

/** A fenced drain of the session's waiting inputs queued in a batch (see `EventBatches.drain`). */
export interface QueuedDrain {
  /** The lease token the drain is fenced by. */
  token: string;
  /** The transcript length it expects before it, or '' for no guard. */
  expected: number | string;
  /** The open run's order (`startRun` gave it), or '' to read it from the run. */
  order: string;
}

/** A drain's reply, as `drainInputs-6.lua` gives it: a code, then input ids and messages. */
export type DrainReply = Array<number | string>;

/** A pending promise's two ends. */
interface Settle<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

/** The writes of one session waiting to go out, in the order they were sent. */
interface SessionBatch {
  sessionId: string;
  caps: StreamCaps;
  /** The script's write arguments, in order: `s`/`l` + event JSON, `a` + an append's, `d` + a drain's. */
  writes: Array<string | number>;
  /** The JSON of its stored events, in order (what the stream gets). */
  stored: string[];
  /** One per append and drain in `writes`, in order: told its reply. */
  appends: Array<Settle<unknown>>;
  settle: Settle<void>;
  sent: Promise<void>;
}

/** Queues events and appends of a connection's sessions; see `eventBatchesOf`. */
export interface EventBatches {
  /**
   * Queues an event of `sessionId` (JSON as `busEventJson` encodes it, without `seq`). It goes
   * out before the next other command sent on the connection, or once the current pass of the
   * event loop ends, whichever comes first. Resolves once Redis has published it; rejects when
   * that failed.
   */
  add(sessionId: string, kind: EventKind, json: string, caps: StreamCaps): Promise<void>;
  /**
   * Queues a fenced append to `sessionId`'s transcript, behind the events queued before it and
   * ahead of those queued after it, in the same script (`sessionWrites-8.lua`). Resolves with
   * the script's reply for it: the transcript's length, -1 (not the holder's) or -2 (not the
   * expected length: nothing written); rejects when Redis failed.
   */
  append(sessionId: string, caps: StreamCaps, append: QueuedAppend): Promise<number>;
  /**
   * Queues a fenced drain of `sessionId`'s waiting inputs (as `drainInputs-6.lua` does) behind
   * the writes queued before it, in the same script: the next turn's drain right behind a
   * batch's appended results. Resolves with its reply; rejects when Redis failed.
   */
  drain(sessionId: string, caps: StreamCaps, drain: QueuedDrain): Promise<DrainReply>;
  /**
   * Takes `sessionId`'s queued events out of the queue, for a script of the session that
   * stores them first (`finishRun.lua`), in place of their own script: their writes (as
   * `publishEvents-1.lua` takes them) and `settle`, to call with that script's outcome (it
   * settles what `add` returned for them). `undefined` when none is queued, or when the
   * session's queued writes hold an append (they go out as they are).
   */
  take(sessionId: string): TakenEvents | undefined;
  /** Sends everything queued now. */
  send(): void;
  /** Sends `sessionId`'s queued writes now, if any (ahead of a tool job's add: see `needsNoEvents`). */
  sendSession(sessionId: string): void;
  /**
   * For a script of `sessionId` that stores events on this connection outside a batch (the
   * run's close, `finishRun.lua`): sends the session's queued writes, if any, then gives the
   * guess of its stream's newest entry (`StreamTails`; '' when unknown) and forgets the session
   * (its run closes: the next one learns it again from a reply).
   */
  closeGuess(sessionId: string): string;
  /**
   * Tells the batches that `sessionId`'s replay stream holds no event yet, as far as the
   * caller knows (its transcript is empty): the session's first batch numbers from 1 without
   * reading the stream (`StreamTails.believeEmpty`; a wrong belief is caught by the first
   * `XADD`, and the stream read then).
   */
  believeEmpty(sessionId: string): void;
}

/** A session's queued events, taken out of the queue (`EventBatches.take`). */
export interface TakenEvents {
  /** Pairs of kind (`s` stored, `l` live) and event JSON (without `seq`), in order. */
  writes: string[];
  /** Settles the events' promises: `undefined` once they are published, else the failure. */
  settle(failure?: unknown): void;
}

const batchesByConnection = new WeakMap<RedisClient, EventBatches>();

/**
 * The event batches of `redis`: events sent one after another on this connection (a run's
 * `turnStart`, `messageStart`, `messageEnd`; the text deltas of one model chunk), and the
 * transcript appends among them, go out as one script per session rather than one script
 * each, while every other command keeps its place: the connection's `sendCommand` first sends
 * what is queued, so Redis runs each queued write before any command the code sent after it
 * (a tool job added after its call's `toolExecStart`, the script that closes a run). A command
 * on one session's keys alone sends that session's writes only (another session's stay queued
 * for the end of the pass, and may still join the events that session sends next); BullMQ's
 * take, completion and lock extension of a job send none (`EVENT_FREE_SCRIPTS`). One per
 * connection, made on first use.
 *
 * @example await eventBatchesOf(redis, keys).add(sessionId, "stored", busEventJson(event, origin), caps)
 */
export function eventBatchesOf(redis: RedisClient, keys: ClusterKeys): EventBatches {
  const known = batchesByConnection.get(redis);
  if (known) return known;
  const made = createEventBatches(redis, keys);
  batchesByConnection.set(redis, made);
  return made;
}

function createEventBatches(redis: RedisClient, keys: ClusterKeys): EventBatches {
  let queued = new Map<string, SessionBatch>();
  let sending = false;
  const tails = new StreamTails();
  const send = () => {
    if (queued.size === 0 || sending) return;
    const batches = queued;
    queued = new Map();
    sending = true;
    try {
      for (const batch of batches.values()) sendBatch(redis, keys, tails, batch);
    } finally {
      sending = false;
    }
  };
  /** The open batch of `sessionId` for writes with `caps`, opened (and the flush planned) if none. */
  const batchFor = (sessionId: string, caps: StreamCaps) => {
    const open = queued.get(sessionId);
    // Caps are the deployment's; a batch never mixes two, and order is kept either way.
    if (open && !sameCaps(open.caps, caps)) send();
    if (queued.size === 0) process.nextTick(send);
    return queued.get(sessionId) ?? openBatch(queued, sessionId, caps);
  };
  /** Sends `sessionId`'s queued writes alone, if any (see `sessionOfCommand`). */
  const sendSession = (sessionId: string) => {
    const batch = queued.get(sessionId);
    if (!batch || sending) return;
    queued.delete(sessionId);
    sending = true;
    try {
      sendBatch(redis, keys, tails, batch);
    } finally {
      sending = false;
    }
  };
  const sessionKeys = `${keys.prefix}:s:{`;
  const scriptName = nameOfScript(redis);
  const toolQueues = [`${keys.bullPrefix}:tools-`, `${keys.bullPrefix}:{tools-`];
  sendQueuedFirst(redis, (command) => {
    if (needsNoEvents(command, scriptName, toolQueues)) return;
    const sessionId = sessionOfCommand(command, sessionKeys);
    if (sessionId === undefined) send();
    else sendSession(sessionId);
  });
  return {
    add(sessionId, kind, json, caps) {
      const batch = batchFor(sessionId, caps);
      batch.writes.push(kind === "stored" ? "s" : "l", json);
      if (kind === "stored") batch.stored.push(json);
      return batch.sent;
    },
    append(sessionId, caps, append) {
      // Behind the session's own queued writes, as any command on its keys alone.
      const batch = batchFor(sessionId, caps);
      const { token, expected, known, pairs } = append;
      batch.writes.push("a", token, expected, known, pairs.length / 2, ...pairs);
      return replyOf(batch, (reply) => Number(reply));
    },
    drain(sessionId, caps, drain) {
      const batch = batchFor(sessionId, caps);
      batch.writes.push("d", drain.token, drain.expected, drain.order);
      return replyOf(batch, (reply) =>
        Array.isArray(reply) ? (reply as DrainReply) : [reply as number],
      );
    },
    take(sessionId) {
      const batch = queued.get(sessionId);
      if (!batch || batch.appends.length > 0) return undefined;
      queued.delete(sessionId);
      return {
        writes: batch.writes.map(String),
        settle: (failure?: unknown) =>
          failure === undefined ? batch.settle.resolve() : batch.settle.reject(failure),
      };
    },
    send,
    sendSession,
    believeEmpty(sessionId) {
      tails.believeEmpty(sessionId);
    },
    closeGuess(sessionId) {
      sendSession(sessionId);
      const guess = tails.guess(sessionId);
      tails.forget(sessionId);
      return guess;
    },
  };
}

/** The reply of the write just queued in `batch`, read by `read`. */
function replyOf<T>(batch: SessionBatch, read: (reply: unknown) => T): Promise<T> {
  return new Promise<T>((resolve, reject) =>
    batch.appends.push({ resolve: (reply) => resolve(read(reply)), reject }),
  );
}

function sameCaps(a: StreamCaps, b: StreamCaps): boolean {
  return a.maxBytes === b.maxBytes && a.maxLength === b.maxLength;
}

/** A new, empty batch of `sessionId`, queued. */
function openBatch(
  queued: Map<string, SessionBatch>,
  sessionId: string,
  caps: StreamCaps,
): SessionBatch {
  const settle: SessionBatch["settle"] = { resolve: () => undefined, reject: () => undefined };
  const sent = new Promise<void>((resolve, reject) => {
    settle.resolve = resolve;
    settle.reject = reject;
  });
  sent.catch(() => undefined); // a caller that does not wait must not see an unhandled rejection
  const batch: SessionBatch = {
    sessionId,
    caps,
    writes: [],
    stored: [],
    appends: [],
    settle,
    sent,
  };
  queued.set(sessionId, batch);
  return batch;
}

/**
 * Sends one session's batch: with appends or drains in it the session-writes script, else
 * `publishBatch`; with the guess of its stream's newest entry (`StreamTails`), which its reply
 * confirms or corrects.
 */
function sendBatch(
  redis: RedisClient,
  keys: ClusterKeys,
  tails: StreamTails,
  batch: SessionBatch,
): void {
  const { guess, sent } = tails.send(batch.sessionId, batch.stored);
  if (batch.appends.length === 0) {
    publishBatch(redis, keys, batch, guess, (reply) => learn(tails, sent, reply));
    return;
  }
  const { sessionId, caps, writes } = batch;
  const reply = withScripts(redis).yiemSessionWrites(
    keys.stream(sessionId),
    keys.lease(sessionId),
    keys.messages(sessionId),
    keys.running(sessionId),
    keys.runInputs(sessionId),
    keys.inputs(sessionId),
    keys.pendingInputs(sessionId),
    keys.run(sessionId),
    keys.eventChannel(sessionId),
    caps.maxLength,
    caps.maxBytes,
    guess,
    ...writes,
  );
  reply.then(
    (replies) => {
      learn(tails, sent, replies);
      batch.settle.resolve();
      for (const [i, write] of batch.appends.entries()) write.resolve(replies[i + 2]);
    },
    (err: unknown) => {
      learn(tails, sent, undefined);
      batch.settle.reject(err);
      for (const append of batch.appends) append.reject(err);
    },
  );
}

/**
 * Tells `tails` what a batch that stored events (`sent`) left as the stream's newest entry: its
 * reply's first two items (number, byte total), or `undefined` when it failed.
 */
function learn(tails: StreamTails, sent: SentEvents | undefined, reply: unknown): void {
  if (!sent) return;
  const [seq, total] = Array.isArray(reply) ? reply : [];
  if (typeof seq === "number" && typeof total === "number") tails.answered(sent, seq, total);
  else tails.failed(sent);
}

/**
 * Sends a batch of events only: a lone live event by its own script, else the batch script
 * with `guess`; `replied` is told the batch script's reply (`undefined` when it failed).
 */
function publishBatch(
  redis: RedisClient,
  keys: ClusterKeys,
  batch: SessionBatch,
  guess: string,
  replied: (reply: unknown) => void,
): void {
  const scripts = withScripts(redis);
  const { sessionId, caps, writes } = batch;
  const channel = keys.eventChannel(sessionId);
  if (writes.length === 2 && writes[0] === "l") {
    const live = scripts.yiemPublishLiveEvent(keys.stream(sessionId), channel, String(writes[1]));
    live.then(() => batch.settle.resolve(), batch.settle.reject);
    return;
  }
  const reply = scripts.yiemPublishEvents(
    keys.stream(sessionId),
    channel,
    caps.maxLength,
    caps.maxBytes,
    guess,
    ...writes,
  );
  reply.then(
    (answer) => {
      replied(answer);
      batch.settle.resolve();
    },
    (err: unknown) => {
      replied(undefined);
      batch.settle.reject(err);
    },
  );
}

/** A command as ioredis hands it to `sendCommand`. */
interface SentCommand {
  name?: string;
  args?: unknown[];
}

/** Plain commands of one key that Yiem sends on a session's keys. */
const ONE_KEY_COMMANDS = new Set([
  "get",
  "getex",
  "set",
  "hget",
  "hmget",
  "hkeys",
  "hgetall",
  "lrange",
  "llen",
  "xrange",
  "xrevrange",
]);

/**
 * Scripts no queued event needs to be ahead of: the take of a job (BullMQ's `moveToActive`,
 * Yiem's `takeJob`), its completion or failure (`moveToFinished`: a request job completes
 * after the script that closed its run stored the run's events, awaited) and lock extensions,
 * and Yiem's claim of a request's session (in the job's hash). Under load a coordinator sends them between every
 * other run's events, and each would cut every session's queued events into one more script.
 * A job's add is not among them: it goes behind its call's `toolExecStart`.
 */
const EVENT_FREE_SCRIPTS = new Set([
  "moveToActive",
  "yiemTakeJob",
  "moveToFinished",
  "yiemCompleteJob",
  "extendLock",
  "extendLocks",
  "yiemClaimRequestSession",
]);

/**
 * Whether `command` is an `EVALSHA` of an `EVENT_FREE_SCRIPTS` script (`scriptName` names it),
 * or of an add of jobs to a tool queue (BullMQ's, or Yiem's `addPlainJobs`, which carries the
 * adds of one pass to one queue; its first key begins with one of `toolQueues`): the
 * coordinator sends each call's session's queued events, its `toolExecStart`, right before it
 * issues the call's add (`RemoteExecutorOptions.beforeAdd`), so before the script that carries
 * it, and no other session's events need to go ahead of it.
 */
function needsNoEvents(
  command: SentCommand,
  scriptName: (sha: string) => string | undefined,
  toolQueues: string[],
): boolean {
  if (command.name !== "evalsha") return false;
  const [sha, , firstKey] = command.args ?? [];
  const name = typeof sha === "string" ? scriptName(sha) : undefined;
  if (name === "addStandardJob" || name === "yiemAddPlainJobs")
    return typeof firstKey === "string" && toolQueues.some((start) => firstKey.startsWith(start));
  return name !== undefined && EVENT_FREE_SCRIPTS.has(name);
}

/**
 * The session whose keys `command` alone touches: a script whose first key is a session's
 * (a script's keys share one slot: they are all that session's), or a one-key command on a
 * session's key; `undefined` for any other command (BullMQ's, several keys, other keys).
 * `sessionKeys` is how a session's keys begin (`<prefix>:s:{`); a session id holds no brace.
 */
function sessionOfCommand(command: SentCommand, sessionKeys: string): string | undefined {
  const args = command.args ?? [];
  let key: unknown;
  if (command.name === "evalsha" || command.name === "eval") {
    key = Number(args[1]) > 0 ? args[2] : undefined;
  } else if (command.name !== undefined && ONE_KEY_COMMANDS.has(command.name)) {
    key = args[0];
  }
  if (typeof key !== "string" || !key.startsWith(sessionKeys)) return undefined;
  const end = key.indexOf("}", sessionKeys.length);
  return end < 0 ? undefined : key.slice(sessionKeys.length, end);
}

/**
 * Makes `redis` send what is queued before any other command it is given: `flush` is told the
 * command first. A command of one session's keys needs only that session's writes ahead of it
 * (no Yiem write depends on another session's events); any other command (a tool job added
 * behind its call's start, a read of several sessions) gets everything queued ahead of it.
 *
 * A pipeline's commands come here one by one, but ioredis writes them to the socket only once
 * the last one is in, while each already waits for its reply in the connection's reply queue:
 * a queued write sent between two of them would reach Redis first and take the earlier one's
 * reply (the `WAIT` behind a replica-acknowledged claim once gave the claim a batch's
 * `{seq, total}`). So a pipeline's first command alone is told to `flush`, and what it sends
 * goes out ahead of the whole pipeline; its other commands send nothing (the pipelines sent on
 * these connections are one session's commands and a `WAIT`, one slot's reads, BullMQ's adds,
 * or begin with `MULTI`, which sends everything).
 */
function sendQueuedFirst(redis: RedisClient, flush: (command: SentCommand) => void): void {
  const target = redis as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const sendCommand = target.sendCommand;
  const pipelinesBegun = new WeakSet<object>();
  target.sendCommand = function sendAfterQueuedEvents(this: unknown, ...args: unknown[]) {
    if (!isPipelinedBehindFirst(args[1], pipelinesBegun)) flush((args[0] ?? {}) as SentCommand);
    return sendCommand.apply(this, args);
  };
}

/**
 * Whether `stream`, what ioredis passes to `sendCommand` beside a command, is a pipeline's
 * (`isPipeline`) whose first command came already (`begun` remembers them; a pipeline sent
 * again after a redirection brings a new one).
 */
function isPipelinedBehindFirst(stream: unknown, begun: WeakSet<object>): boolean {
  if (typeof stream !== "object" || stream === null || !("isPipeline" in stream)) return false;
  if (begun.has(stream)) return true;
  begun.add(stream);
  return false;
}
