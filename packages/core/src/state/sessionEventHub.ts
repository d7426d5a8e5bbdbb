import type { Redis } from "ioredis";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { openSubscriberConnection } from "../redis/subscriberConnection.js";
import { splitBusMessage } from "./busMessages.js";

/** What a hub tells one listener of a session's channel. */
export interface SessionChannelListener {
  /**
   * An event of a message on the session's event channel (a message holds one or more, one a
   * line: `splitBusMessage`), in order: its bytes, one buffer of its own for every listener of
   * the message (never changed, never reused by the connection).
   */
  message(bytes: Buffer): void;
  /**
   * The shared subscriber (re)connected and the session's channel is subscribed (again):
   * messages published meanwhile were missed; read them from the session's stream. Also
   * said on the first connect, to listeners still waiting for `subscribed`.
   */
  resubscribed(): void;
  /** The hub closed: no message comes any more. */
  closed(): void;
}

/** One listener's hold on a session's channel. */
export interface SessionChannelHold {
  /** Resolves once the channel is subscribed: every message published from then on comes. */
  subscribed: Promise<void>;
  /** Lets go of the channel; the last listener's release unsubscribes it. Idempotent. */
  release(): void;
}

/** Options of `SessionEventHub`. */
export interface SessionEventHubOptions {
  /** Where Redis is: a single Redis or a cluster (the hub opens its own subscriber beside it). */
  command: RedisClient;
  keys: ClusterKeys;
  /**
   * How often the subscriber is pinged; a ping unanswered for as long again reconnects it (a
   * connection cut without a reset would otherwise stay silent). Default 15 000 ms.
   */
  probeMs?: number;
}

/** The listeners of one channel, and whether the current connection has it subscribed. */
interface Channel {
  listeners: Set<SessionChannelListener>;
  subscribed: boolean;
  waiters: Array<() => void>;
}

/** Most channels one `SUBSCRIBE` names when a reconnect subscribes them all again. */
const SUBSCRIBE_CHUNK = 1000;

/** How long a cluster subscriber that gave up on its node waits before trying the next one. */
const NEXT_NODE_DELAY_MS = 200;

const noop = () => undefined;

/**
 * One subscriber connection per process, shared by every session event stream of that process
 * (`streamSessionEvents`): a session's channel is subscribed while at least one listener holds
 * it (`hold`: the first subscribes, the last release unsubscribes), and each message goes to
 * the listeners of its channel. When the connection comes back (a restart, a `CLIENT KILL`, a
 * cluster node lost), the hub subscribes every held channel again in a few commands and then
 * tells each listener (`resubscribed`), which reads what it missed from its session's stream.
 * Nothing polls per stream: idle streams cost Redis nothing but the subscription and one ping
 * of the connection every `probeMs`. The connection opens on the first hold and closes with
 * `close`. Works alike on a single Redis and a Redis Cluster (`openSubscriberConnection`).
 *
 * @example
 * const hub = new SessionEventHub({ command, keys });
 * const hold = hub.hold("s-1", { message: onText, resubscribed: readGap, closed: end });
 * await hold.subscribed; // … hold.release();
 */
export class SessionEventHub {
  private readonly channels = new Map<string, Channel>();
  private connection: Redis | undefined;
  private attempts = 0;
  /** True while a cluster that knew no node is waited for (one `ready` listener for all). */
  private waitingForNodes = false;
  private probe: NodeJS.Timeout | undefined;
  private isClosed = false;

  constructor(private readonly options: SessionEventHubOptions) {}

  /** Holds the channel of `sessionId` for `listener` (see the class). */
  hold(sessionId: string, listener: SessionChannelListener): SessionChannelHold {
    if (this.isClosed) {
      queueMicrotask(() => listener.closed());
      return { subscribed: new Promise<void>(noop), release: noop };
    }
    const name = this.options.keys.eventChannel(sessionId);
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), subscribed: false, waiters: [] };
      this.channels.set(name, channel);
      this.subscribe(name, channel);
    }
    channel.listeners.add(listener);
    const held = channel;
    const subscribed = held.subscribed
      ? Promise.resolve()
      : new Promise<void>((resolve) => held.waiters.push(resolve));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.release(name, held, listener);
    };
    return { subscribed, release };
  }

  /** Closes the connection; every listener is told (`closed`). Idempotent. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    clearInterval(this.probe);
    const listeners = [...this.channels.values()].flatMap((c) => [...c.listeners]);
    this.channels.clear();
    this.connection?.disconnect();
    this.connection = undefined;
    for (const listener of listeners) listener.closed();
  }

  private release(name: string, channel: Channel, listener: SessionChannelListener): void {
    channel.listeners.delete(listener);
    if (channel.listeners.size > 0 || this.channels.get(name) !== channel) return;
    this.channels.delete(name);
    // Also while its SUBSCRIBE is in flight: the connection applies the two in order.
    const redis = this.connection;
    if (redis?.status === "ready") redis.unsubscribe(name).catch(noop);
  }

  /** Subscribes one new channel now if the connection is ready (else the next `ready` does). */
  private subscribe(name: string, channel: Channel): void {
    const redis = this.connect();
    if (redis?.status !== "ready") return;
    redis.subscribe(name).then(
      () => this.confirm(redis, name, channel),
      noop, // the connection dropped: its next `ready` subscribes the channel again
    );
  }

  /** Marks `channel` subscribed on `redis` (if both are still current) and wakes its waiters. */
  private confirm(redis: Redis, name: string, channel: Channel): void {
    if (redis !== this.connection || this.channels.get(name) !== channel) return;
    channel.subscribed = true;
    for (const wake of channel.waiters.splice(0)) wake();
  }

  /** The connection, opened on first use. */
  private connect(): Redis | undefined {
    if (this.connection || this.isClosed) return this.connection;
    const redis = openSubscriberConnection(this.options.command, this.attempts++);
    if (!redis) {
      // A cluster that knows no node yet: try once it does.
      if (!this.waitingForNodes) {
        this.waitingForNodes = true;
        this.options.command.once("ready", () => {
          this.waitingForNodes = false;
          this.reconnectIfIdle();
        });
      }
      return undefined;
    }
    this.connection = redis;
    redis.on("error", noop); // it reconnects by itself; `ready` says when it is back
    // As bytes: a relay of large events never makes them a string (see `ReadEvent`).
    redis.on("messageBuffer", (name: Buffer, bytes: Buffer) => this.dispatch(String(name), bytes));
    redis.on("ready", () => void this.resubscribe(redis));
    redis.on("end", () => this.replace(redis));
    this.startProbe();
    return redis;
  }

  /** Opens a connection when channels are held and none is open. */
  private reconnectIfIdle(): void {
    if (this.connection || this.isClosed || this.channels.size === 0) return;
    const redis = this.connect();
    if (redis?.status === "ready") void this.resubscribe(redis);
  }

  /** A connection that gave up (a cluster node gone): the next one, to another node. */
  private replace(redis: Redis): void {
    if (redis !== this.connection || this.isClosed) return;
    this.connection = undefined;
    for (const channel of this.channels.values()) channel.subscribed = false;
    setTimeout(() => this.reconnectIfIdle(), NEXT_NODE_DELAY_MS).unref();
  }

  /**
   * Gives the events of `bytes` (the connection's, a view of its read buffers) to the channel's
   * listeners, each event one copy of their own, in order.
   */
  private dispatch(name: string, bytes: Buffer): void {
    const channel = this.channels.get(name);
    if (!channel) return;
    for (const event of splitBusMessage(bytes)) {
      for (const listener of channel.listeners) listener.message(event);
    }
  }

  /**
   * On every (re)connect: subscribes every held channel (the new connection has none), then
   * tells their listeners, which read what they missed. A failure leaves it to the next `ready`.
   */
  private async resubscribe(redis: Redis): Promise<void> {
    const held = [...this.channels.entries()];
    for (const [, channel] of held) channel.subscribed = false;
    try {
      for (let at = 0; at < held.length; at += SUBSCRIBE_CHUNK) {
        await redis.subscribe(...held.slice(at, at + SUBSCRIBE_CHUNK).map(([name]) => name));
      }
    } catch {
      return;
    }
    for (const [name, channel] of held) {
      this.confirm(redis, name, channel);
      if (this.channels.get(name) !== channel) continue;
      for (const listener of channel.listeners) listener.resubscribed();
    }
  }

  /** Pings the connection every `probeMs`; one unanswered for as long reconnects it. */
  private startProbe(): void {
    if (this.probe) return;
    const probeMs = this.options.probeMs ?? 15_000;
    this.probe = setInterval(() => {
      const redis = this.connection;
      if (redis?.status !== "ready") return;
      const timer = setTimeout(() => redis.disconnect(true), probeMs);
      redis.ping().then(
        () => clearTimeout(timer),
        () => clearTimeout(timer),
      );
    }, probeMs);
    this.probe.unref();
  }
}
