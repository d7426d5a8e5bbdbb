import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { RedisClient } from "./redisConnection.js";

/**
 * What a shared subscriber connection needs on top of its target's options: it fails commands
 * sent while it is not ready (its owner subscribes again on `ready`), never resubscribes by
 * itself (its owner does, and then knows when the subscriptions are in place), and never gives
 * up on a command it sent.
 */
const SUBSCRIBER_OPTIONS: RedisOptions = {
  lazyConnect: false,
  enableOfflineQueue: false,
  autoResubscribe: false,
  maxRetriesPerRequest: null,
};

/** Reconnect attempts to one cluster node before the subscriber moves to another node. */
const NODE_ATTEMPTS = 3;

/**
 * Opens a plain subscriber connection to where `command` points: a duplicate of it on a single
 * Redis (it reconnects for ever); on a Redis Cluster, a connection to one of the cluster's
 * known nodes (`attempt` picks which, round robin), since a `PUBLISH` reaches every node's
 * subscribers. A node connection gives up (`end`) after a few failed reconnects, so that its
 * owner can open one to the next node. Returns `undefined` on a cluster that knows no node yet
 * (not connected): try again once it is ready.
 *
 * Unlike ioredis' own cluster subscriber, which moves to another node silently, the connection
 * says `ready` each time it (re)connects: its owner can subscribe again and then read what it
 * missed.
 *
 * @example const subscriber = openSubscriberConnection(command, 0); subscriber?.on("ready", resubscribe);
 */
export function openSubscriberConnection(command: RedisClient, attempt = 0): Redis | undefined {
  if (!(command instanceof Cluster)) return command.duplicate(SUBSCRIBER_OPTIONS);
  const nodes = command.nodes("all");
  const node = nodes[attempt % Math.max(1, nodes.length)];
  if (!node) return undefined;
  return new Redis({
    ...command.options.redisOptions,
    ...SUBSCRIBER_OPTIONS,
    host: node.options.host,
    port: node.options.port,
    retryStrategy: (times) => (times > NODE_ATTEMPTS ? null : Math.min(times * 200, 1000)),
  });
}
