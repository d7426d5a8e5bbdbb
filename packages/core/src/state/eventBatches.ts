import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";
import type { StreamCaps } from "./streamCaps.js";

/** How an event is sent: stored (numbered, in the replay stream) or live only (streamed text). */
export type EventKind = "stored" | "live";

/** The events of one session waiting to go out, in the order they were sent. */
interface SessionBatch {
  sessionId: string;
  caps: StreamCaps;
  /** Pairs: kind (`s` / `l`), event JSON without `seq`. */
  pairs: string[];
  settle: { resolve(): void; reject(err: unknown): void };
  sent: Promise<void>;
}

/** Queues events of a connection's sessions; see `eventBatchesOf`. */
export interface EventBatches {
  /**
   * Queues an event of `sessionId` (JSON as `busEventJson` encodes it, without `seq`). It goes
   * out before the next other command sent on the connection, or once the current pass of the
   * event loop ends, whichever comes first. Resolves once Redis has published it; rejects when
   * that failed.
   */
  add(sessionId: string, kind: EventKind, json: string, caps: StreamCaps): Promise<void>;
  /** Sends every queued event now. */
  send(): void;
}

const batchesByConnection = new WeakMap<RedisClient, EventBatches>();

/**
 * The event batches of `redis`: events sent one after another on this connection (a run's
 * `turnStart`, `messageStart`, `messageEnd`; the text deltas of one model chunk) go out as one
 * script per session (`publishEvents-2.lua`) rather than one script each, while every other
 * command keeps its place: the connection's `sendCommand` first sends what is queued, so Redis
 * runs each event before any command the code sent after it (a tool job added after its
 * call's `toolExecStart`, the script that closes a run). One per connection, made on first use.
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
  const send = () => {
    if (queued.size === 0 || sending) return;
    const batches = queued;
    queued = new Map();
    sending = true;
    try {
      for (const batch of batches.values()) publishBatch(redis, keys, batch);
    } finally {
      sending = false;
    }
  };
  sendQueuedFirst(redis, send);
  return {
    add(sessionId, kind, json, caps) {
      const open = queued.get(sessionId);
      // Caps are the deployment's; a batch never mixes two, and order is kept either way.
      if (open && !sameCaps(open.caps, caps)) send();
      if (queued.size === 0) process.nextTick(send);
      const batch = queued.get(sessionId) ?? openBatch(queued, sessionId, caps);
      batch.pairs.push(kind === "stored" ? "s" : "l", json);
      return batch.sent;
    },
    send,
  };
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
  const batch: SessionBatch = { sessionId, caps, pairs: [], settle, sent };
  queued.set(sessionId, batch);
  return batch;
}

/** Sends one session's batch: the one-event scripts for a lone event, else the batch script. */
function publishBatch(redis: RedisClient, keys: ClusterKeys, batch: SessionBatch): void {
  const scripts = withScripts(redis);
  const { sessionId, caps, pairs } = batch;
  const channel = keys.eventChannel(sessionId);
  let reply: Promise<number>;
  if (pairs.length === 2 && pairs[0] === "s") {
    reply = scripts.yiemPublishEvent(
      keys.seq(sessionId),
      keys.stream(sessionId),
      channel,
      pairs[1] ?? "",
      caps.maxLength,
      caps.maxBytes,
    );
  } else if (pairs.length === 2) {
    reply = scripts.yiemPublishLiveEvent(keys.seq(sessionId), channel, pairs[1] ?? "");
  } else {
    reply = scripts.yiemPublishEvents(
      keys.seq(sessionId),
      keys.stream(sessionId),
      channel,
      caps.maxLength,
      caps.maxBytes,
      ...pairs,
    );
  }
  reply.then(() => batch.settle.resolve(), batch.settle.reject);
}

/** Makes `redis` send what `send` has queued before any other command it is given. */
function sendQueuedFirst(redis: RedisClient, send: () => void): void {
  const target = redis as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const sendCommand = target.sendCommand;
  target.sendCommand = function sendAfterQueuedEvents(this: unknown, ...args: unknown[]) {
    send();
    return sendCommand.apply(this, args);
  };
}
