/** The configuration every Yiem process reads from its environment (the README's table). */
export interface ClusterConfig {
  /** `REDIS_URL`: `redis://` or `rediss://`, with a password or ACL user when needed. */
  redisUrl: string;
  /**
   * `REDIS_CLUSTER_NODES`: comma-separated seed URLs of a Redis Cluster. When set, every
   * process talks to the cluster instead of `REDIS_URL` (same user, password and TLS rules).
   */
  redisClusterNodes: string[];
  /**
   * `YIEM_SHARDS`: BullMQ queues per tool queue, chosen by session (default 1 on a single
   * Redis, 3 on a cluster, so tool traffic spreads over the masters).
   */
  shards: number | undefined;
  /** `YIEM_REPLICA_ACKS`: replicas that acknowledge each session write (default 1 on a cluster, 0 otherwise). */
  replicaAcks: number | undefined;
  /** `YIEM_REPLICA_ACK_TIMEOUT_MS`: how long a write waits for them (default 250). */
  replicaAckTimeoutMs: number | undefined;
  /** `YIEM_PREFIX`: the namespace of every key and queue. */
  prefix: string;
  /** `OPENAI_BASE_URL`: any OpenAI-compatible server; unset means the OpenAI API. */
  openaiBaseUrl: string | undefined;
  /** `OPENAI_API_KEY`: never logged. */
  openaiApiKey: string | undefined;
  /** `YIEM_MODEL`. */
  model: string;
  /** `YIEM_TOOLS_DIR`: a folder of extra tool files, loaded after the built-in tools. */
  toolsDir: string | undefined;
  /** `PORT`: the coordinator's HTTP port (Bull Board, /healthz, /metrics). */
  port: number;
  /** `WORKER_PORT`: a tool worker's HTTP port (`/healthz`, `/metrics`); unset means none. */
  workerPort: number | undefined;
  /** `WORKER_HOST`: the address a worker's HTTP side listens on. Default `127.0.0.1`. */
  workerHost: string | undefined;
  /** `WORKER_CONCURRENCY`: tool calls one worker runs at once. */
  workerConcurrency: number;
  /** `YIEM_QUEUES`: the tool queues a worker takes, comma-separated. */
  queues: string[];
  /**
   * `YIEM_HTTP_MAX_CONNECTIONS`: connections each HTTP side (the coordinator's, a worker's)
   * holds at once; unset means `HttpLimits`' default (256).
   */
  httpMaxConnections: number | undefined;
  /** `YIEM_COORDINATOR_CONCURRENCY`: sessions one coordinator runs at once (default 512). */
  coordinatorConcurrency: number;
  /**
   * `YIEM_HEAP_GROWTH_PERCENT`: how far a coordinator's heap may grow past what was live after
   * a full garbage collection before the next one, in percent (default 150: 2.5×); 0 leaves
   * V8's own factor (up to 4×). See `limitHeapGrowth`.
   */
  heapGrowthPercent: number;
  /** `YIEM_SYSTEM_PROMPT`. */
  systemPrompt: string | undefined;
  /**
   * `YIEM_ADMIN_USER` / `YIEM_ADMIN_PASSWORD`: basic auth for Bull Board. Both or neither: the
   * coordinator refuses to start with one alone (`checkAdminCredentials`).
   */
  adminUser: string | undefined;
  adminPassword: string | undefined;
  /**
   * `YIEM_ADMIN_HOST`: the address the coordinator's HTTP side listens on; unset means
   * `127.0.0.1` without admin credentials and every interface (`0.0.0.0`) with them.
   */
  adminHost: string | undefined;
  /** `YIEM_ADMIN_READONLY=1`: Bull Board without retry, clean or remove buttons. */
  adminReadOnly: boolean;
  /** `YIEM_APPROVAL_TIMEOUT_MS`: deny a call awaiting approval on its own after this long (none when unset). */
  approvalTimeoutMs: number | undefined;
  /** `YIEM_LEASE_MS`: how long a coordinator's hold on a session lasts without renewal. */
  leaseMs: number;
  /** `YIEM_LOCK_MS` / `YIEM_STALLED_INTERVAL_MS`: BullMQ job lock and stalled-check period. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /**
   * `YIEM_LIMITED_LOCK_MS`: the lock on the queues of limited tools, when shorter than
   * `YIEM_LOCK_MS`; unset means the worker's default (5 s, see `ToolWorkerOptions`).
   */
  limitedLockDurationMs: number | undefined;
  /** `YIEM_SHUTDOWN_GRACE_MS`: how long a stopping coordinator lets held runs finish before handing them over. */
  shutdownGraceMs: number;
  /** `YIEM_WORKER_DRAIN_MS`: how long a stopping worker lets running calls finish before it exits. */
  workerDrainMs: number;
  /** `YIEM_MAX_TOOL_CALLS` / `YIEM_MAX_ARGUMENT_BYTES`: caps on one model message's tool calls. */
  maxToolCalls: number;
  maxArgumentBytes: number;
  /** `YIEM_MAX_INPUT_BYTES`: the largest input a request may carry (bytes of its JSON). */
  maxInputBytes: number;
  /**
   * `YIEM_REQUEST_RETENTION_S`: how long a completed request job stays in the coordinator queue
   * when whoever added it set no `removeOnComplete` (default 3600; failed ones at least a day).
   */
  requestRetentionS: number;
  /** `YIEM_MAX_CONTEXT_BYTES`: the transcript sent to the model in one request (oldest turns dropped). */
  maxContextBytes: number;
  /** `LOG_LEVEL`: pino level. */
  logLevel: string;
}

/**
 * Sessions one coordinator runs at once unless told otherwise. Runs mostly wait on the model,
 * so a coordinator can hold many: at 2,000 live sessions one process stayed under 300 MB and
 * answered /healthz within 200 ms at p99 (docs/PERFORMANCE.md, "Sessions"), while 64 left it
 * idle behind a slow model.
 */
export const DEFAULT_COORDINATOR_CONCURRENCY = 512;

/**
 * The coordinator's default heap growth (`YIEM_HEAP_GROWTH_PERCENT`): 150 % past the live heap
 * (2.5×). With 2,000 sessions at once, V8's own factor let the heap fill with garbage to
 * about 300 MB of RSS; this keeps it near 250 MB at no CPU cost measurable on the benchmark.
 */
export const DEFAULT_HEAP_GROWTH_PERCENT = 150;

/** Thrown for a setting that cannot be read; names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  }
  return value;
}

function readOptionalInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  return env[name]?.trim() ? readInt(env, name, 0) : undefined;
}

/** An optional count that may be 0 (e.g. `YIEM_REPLICA_ACKS=0` turns acknowledgements off). */
function readOptionalCount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError(`${name} must be a whole number (0 or more), got "${raw}"`);
  }
  return value;
}

function readString(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

/** A comma-separated list, trimmed, without empty entries. */
function readList(env: NodeJS.ProcessEnv, name: string): string[] {
  return (readString(env, name) ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/**
 * Reads the configuration from the environment, with the defaults the README lists.
 * Throws `ConfigError` naming the variable when one is malformed.
 *
 * @example const config = readClusterConfig(); // REDIS_URL=redis://127.0.0.1:6379 by default
 */
export function readClusterConfig(env: NodeJS.ProcessEnv = process.env): ClusterConfig {
  const queues = readList(env, "YIEM_QUEUES");
  return {
    redisUrl: readString(env, "REDIS_URL") ?? "redis://127.0.0.1:6379",
    redisClusterNodes: readList(env, "REDIS_CLUSTER_NODES"),
    shards: readOptionalInt(env, "YIEM_SHARDS"),
    replicaAcks: readOptionalCount(env, "YIEM_REPLICA_ACKS"),
    replicaAckTimeoutMs: readOptionalInt(env, "YIEM_REPLICA_ACK_TIMEOUT_MS"),
    prefix: readString(env, "YIEM_PREFIX") ?? "yiem",
    openaiBaseUrl: readString(env, "OPENAI_BASE_URL"),
    openaiApiKey: readString(env, "OPENAI_API_KEY"),
    model: readString(env, "YIEM_MODEL") ?? "gpt-4o-mini",
    toolsDir: readString(env, "YIEM_TOOLS_DIR"),
    port: readInt(env, "PORT", 3000),
    workerPort: readOptionalInt(env, "WORKER_PORT"),
    workerHost: readString(env, "WORKER_HOST"),
    workerConcurrency: readInt(env, "WORKER_CONCURRENCY", 16),
    httpMaxConnections: readOptionalInt(env, "YIEM_HTTP_MAX_CONNECTIONS"),
    queues: queues.length > 0 ? queues : ["default"],
    coordinatorConcurrency: readInt(
      env,
      "YIEM_COORDINATOR_CONCURRENCY",
      DEFAULT_COORDINATOR_CONCURRENCY,
    ),
    heapGrowthPercent:
      readOptionalCount(env, "YIEM_HEAP_GROWTH_PERCENT") ?? DEFAULT_HEAP_GROWTH_PERCENT,
    systemPrompt: readString(env, "YIEM_SYSTEM_PROMPT"),
    adminUser: readString(env, "YIEM_ADMIN_USER"),
    adminPassword: readString(env, "YIEM_ADMIN_PASSWORD"),
    adminHost: readString(env, "YIEM_ADMIN_HOST"),
    adminReadOnly: readString(env, "YIEM_ADMIN_READONLY") === "1",
    approvalTimeoutMs: readOptionalInt(env, "YIEM_APPROVAL_TIMEOUT_MS"),
    leaseMs: readInt(env, "YIEM_LEASE_MS", 10_000),
    lockDurationMs: readInt(env, "YIEM_LOCK_MS", 30_000),
    stalledIntervalMs: readInt(env, "YIEM_STALLED_INTERVAL_MS", 30_000),
    limitedLockDurationMs: readOptionalInt(env, "YIEM_LIMITED_LOCK_MS"),
    shutdownGraceMs: readInt(env, "YIEM_SHUTDOWN_GRACE_MS", 10_000),
    workerDrainMs: readInt(env, "YIEM_WORKER_DRAIN_MS", 30_000),
    maxToolCalls: readInt(env, "YIEM_MAX_TOOL_CALLS", 64),
    maxArgumentBytes: readInt(env, "YIEM_MAX_ARGUMENT_BYTES", 256 * 1024),
    maxInputBytes: readInt(env, "YIEM_MAX_INPUT_BYTES", 1024 * 1024),
    maxContextBytes: readInt(env, "YIEM_MAX_CONTEXT_BYTES", 4 * 1024 * 1024),
    requestRetentionS: readInt(env, "YIEM_REQUEST_RETENTION_S", 3600),
    logLevel: readString(env, "LOG_LEVEL") ?? "info",
  };
}
