import type { HttpLimits } from "../ops/httpListen.js";
import type { RedisTarget } from "../redis/redisConnection.js";

/**
 * Where a process's data lives: the options the coordinator, a tool worker, the gateway and
 * `YiemClient` share, under the same names (`REDIS_URL` / `REDIS_CLUSTER_NODES`,
 * `YIEM_PREFIX`, `YIEM_SHARDS`).
 */
export interface RedisConnectionOptions {
  /** A `redis://` URL, ioredis options, or `{ clusterNodes }` for a Redis Cluster. */
  redis: RedisTarget;
  /**
   * The namespace of every key and queue (`YIEM_PREFIX`).
   * @defaultValue `DEFAULTS.prefix` (`yiem`)
   */
  prefix?: string;
  /**
   * Tool queue shards (`YIEM_SHARDS`).
   * @defaultValue 1 on a single Redis, `DEFAULTS.clusterShards` on a cluster
   */
  shards?: number;
}

/**
 * A process's HTTP side: the options the coordinator, a tool worker and the gateway share,
 * under the same names. Without `port`, a coordinator or worker serves no HTTP.
 */
export interface HttpServerOptions {
  /** The port to serve on (0: any free one). */
  port?: number;
  /**
   * The address to listen on (`YIEM_ADMIN_HOST`, `WORKER_HOST`, `GATEWAY_HOST`).
   * @defaultValue `127.0.0.1` (a coordinator with admin credentials: `0.0.0.0`)
   */
  host?: string;
  /** The connection cap and timeouts (`YIEM_HTTP_MAX_CONNECTIONS`; see `HttpLimits`). */
  http?: HttpLimits;
}

/** How long a stopping process lets its work finish: the coordinator's `YIEM_SHUTDOWN_GRACE_MS`. */
export interface ShutdownGraceOptions {
  /**
   * How long `close()` lets held work finish before handing it over, in milliseconds.
   * @defaultValue `DEFAULTS.shutdownGraceMs`
   */
  shutdownGraceMs?: number;
}
