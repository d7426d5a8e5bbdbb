import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import { coalesceWrites } from "./coalescedWrites.js";

/**
 * Where Redis is: a `redis://` / `rediss://` URL, ioredis options, or the seed nodes of a
 * Redis Cluster (`REDIS_CLUSTER_NODES`). Every node of a cluster takes the first seed URL's
 * user, password and TLS.
 */
export type RedisTarget = string | RedisOptions | { clusterNodes: string[] };

/** A connection to a single Redis or to a Redis Cluster: every Yiem process takes either. */
export type RedisClient = Redis | Cluster;

/** True when `target` names a Redis Cluster. */
export function isClusterTarget(target: RedisTarget): target is { clusterNodes: string[] } {
  return typeof target === "object" && "clusterNodes" in target;
}

/** A URL with its password replaced by `***`. */
function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "(unparseable Redis URL)";
  }
}

/** A printable form of a target, with any password replaced by `***`. */
export function describeRedisTarget(target: RedisTarget): string {
  if (typeof target === "string") return redactUrl(target);
  if (isClusterTarget(target)) return `cluster ${target.clusterNodes.map(redactUrl).join(",")}`;
  return `${target.host ?? "127.0.0.1"}:${target.port ?? 6379}`;
}

/**
 * Reads `REDIS_CLUSTER_NODES` (comma-separated seed URLs) or `REDIS_URL` into a target.
 *
 * @example redisTargetOf({ REDIS_CLUSTER_NODES: "redis://127.0.0.1:7000,redis://127.0.0.1:7001" })
 * // { clusterNodes: ["redis://127.0.0.1:7000", "redis://127.0.0.1:7001"] }
 */
export function redisTargetOf(config: { redisUrl: string; redisClusterNodes?: string[] }) {
  const nodes = config.redisClusterNodes ?? [];
  return nodes.length > 0 ? { clusterNodes: nodes } : config.redisUrl;
}

/** The options every cluster node shares, read from a seed URL (user, password, TLS, db 0). */
function nodeOptionsOf(seed: string | undefined): RedisOptions {
  if (!seed) return {};
  const url = new URL(seed);
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
  };
}

/** The host and port of a seed URL. */
function seedOf(text: string): { host: string; port: number } {
  const url = new URL(text);
  return { host: url.hostname, port: Number(url.port || 6379) };
}

/** Opens an ioredis `Cluster` over the seed nodes with `overrides` for every node. */
function connectCluster(
  nodes: string[],
  overrides: RedisOptions,
  clusterOverrides: Partial<ClusterOptions> = {},
): Cluster {
  const { enableOfflineQueue, lazyConnect, retryStrategy, ...perNode } = overrides;
  const options: ClusterOptions = {
    ...clusterOverrides,
    lazyConnect: lazyConnect ?? false,
    ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
    enableOfflineQueue: enableOfflineQueue ?? true,
    // A failover takes a couple of seconds: keep commands through it rather than fail them.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
    // Durable connections wait out a failover (every redirection or retry counts; ioredis'
    // default of 16 is spent in about 4 s, and BullMQ fails a finished job on that error).
    maxRedirections: perNode.maxRetriesPerRequest === null ? DURABLE_REDIRECTIONS : 16,
    slotsRefreshTimeout: 2000,
    redisOptions: { ...nodeOptionsOf(nodes[0]), ...perNode },
  };
  return coalesceWrites(withQuickBlockingDuplicates(new Cluster(nodes.map(seedOf), options)));
}

/** Redirections and retries a durable cluster command may take: minutes of failover. */
const DURABLE_REDIRECTIONS = 1000;

/** Redirections a blocking fetch may take: it must fail within BullMQ's 2 s watchdog. */
const BLOCKING_REDIRECTIONS = 4;

/**
 * BullMQ duplicates the connection it is given for its blocking fetch (`BZPOPMIN`), and
 * reconnects that duplicate when the fetch outlives its watchdog (the block time plus 1 s).
 * On a cluster that reconnect can wait forever for an `end` that never comes, and the
 * worker never fetches again. Its duplicates therefore give up after a few redirections: the
 * fetch fails fast and BullMQ's own error path retries it.
 */
function withQuickBlockingDuplicates(cluster: Cluster): Cluster {
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = (nodes, options = {}) =>
    duplicate(nodes, { maxRedirections: BLOCKING_REDIRECTIONS, ...options });
  return cluster;
}

/**
 * Opens a connection to `target` with `overrides` on top: an ioredis `Redis`, or a `Cluster`
 * when the target names cluster nodes. BullMQ workers and blocking readers need
 * `maxRetriesPerRequest: null`; short-lived clients pass `enableOfflineQueue: false` to fail
 * fast while Redis is down. `clusterOverrides` apply to a `Cluster` only (e.g.
 * `shardedSubscribers`, without which ioredis sends a sharded subscribe to one node, and one
 * redirected never settles).
 */
export function connectRedis(
  target: RedisTarget,
  overrides: RedisOptions = {},
  clusterOverrides: Partial<ClusterOptions> = {},
): RedisClient {
  if (isClusterTarget(target))
    return connectCluster(target.clusterNodes, overrides, clusterOverrides);
  const options: RedisOptions = { lazyConnect: false, ...overrides };
  return coalesceWrites(
    typeof target === "string" ? new Redis(target, options) : new Redis({ ...target, ...options }),
  );
}

/**
 * A second connection to where `redis` points, with `overrides` (e.g. a subscriber, which
 * must not share the command connection). Works alike for a `Redis` and a `Cluster`.
 */
export function duplicateConnection(redis: RedisClient, overrides: RedisOptions = {}): RedisClient {
  if (redis instanceof Cluster) {
    const { enableOfflineQueue, lazyConnect, ...perNode } = overrides;
    return coalesceWrites(
      redis.duplicate(undefined, {
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
        ...(lazyConnect === undefined ? {} : { lazyConnect }),
        redisOptions: { ...redis.options.redisOptions, ...perNode },
      }),
    );
  }
  return coalesceWrites(redis.duplicate(overrides));
}

/** Options for connections that block or belong to BullMQ (never give up while reconnecting). */
export const DURABLE_CONNECTION: RedisOptions = { maxRetriesPerRequest: null };
