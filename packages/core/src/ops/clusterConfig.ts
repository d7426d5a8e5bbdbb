import { YiemError } from "../errors/yiemError.js";
import { DEFAULTS } from "./defaults.js";

/**
 * The configuration every Yiem process reads from its environment (the README's table); a
 * variable left unset takes its value from `DEFAULTS`.
 */
export interface ClusterConfig {
  /**
   * `REDIS_URL`: `redis://` or `rediss://`, with a password or ACL user when needed.
   * @defaultValue `DEFAULTS.redisUrl`
   */
  redisUrl: string;
  /**
   * `REDIS_CLUSTER_NODES`: comma-separated seed URLs of a Redis Cluster. When set, every
   * process talks to the cluster instead of `REDIS_URL` (same user, password and TLS rules).
   */
  redisClusterNodes: string[];
  /**
   * `YIEM_SHARDS`: BullMQ queues per tool queue, chosen by session; unset means 1 on a single
   * Redis and `DEFAULTS.clusterShards` on a cluster.
   */
  shards: number | undefined;
  /**
   * `YIEM_REPLICA_ACKS`: replicas that acknowledge each session write; unset means 0 on a
   * single Redis and `DEFAULTS.clusterReplicaAcks` on a cluster.
   */
  replicaAcks: number | undefined;
  /**
   * `YIEM_REPLICA_ACK_TIMEOUT_MS`: how long a write waits for them; unset means
   * `DEFAULTS.replicaAckTimeoutMs`.
   */
  replicaAckTimeoutMs: number | undefined;
  /**
   * `YIEM_PREFIX`: the namespace of every key and queue.
   * @defaultValue `DEFAULTS.prefix`
   */
  prefix: string;
  /** `OPENAI_BASE_URL`: any OpenAI-compatible server; unset means the OpenAI API. */
  openaiBaseUrl: string | undefined;
  /** `OPENAI_API_KEY`: never logged. */
  openaiApiKey: string | undefined;
  /**
   * `YIEM_MODEL`.
   * @defaultValue `DEFAULTS.model`
   */
  model: string;
  /**
   * `YIEM_PRICES`: the path of a JSON price table (`{ "<model>": { input, output,
   * cachedInput? } }`, dollars per million tokens), loaded by `loadPriceTable`; unset means
   * no cost is computed.
   */
  pricesFile: string | undefined;
  /**
   * `YIEM_BUDGET`: limits on what each run may use, as JSON (`{ "maxModelCalls": 20,
   * "maxTokens": 200000, "maxToolCalls": 100, "maxCostUsd": 1 }`); read by `readRunBudget`.
   */
  budgetJson: string | undefined;
  /** `YIEM_TOOLS_DIR`: a folder of extra tool files, loaded after the built-in tools. */
  toolsDir: string | undefined;
  /** `YIEM_MCP_CONFIG`: a tool worker's MCP servers (a JSON file, `readMcpConfig`); none when unset. */
  mcpConfig: string | undefined;
  /**
   * `YIEM_BUILTIN_TOOLS`: the built-in tools to offer, comma-separated; `none` gives `[]`;
   * unset means the default of `@yiem/tools` (`getTime`, `getWeather`: `httpFetch` is
   * opt-in). The names are checked when the tools load.
   */
  builtinTools: string[] | undefined;
  /**
   * `YIEM_HTTP_FETCH_ALLOW`: hosts or CIDR ranges `httpFetch` may reach although they are
   * loopback, private, link-local or metadata addresses (`127.0.0.1/32,internal.example`).
   */
  httpFetchAllow: string[];
  /**
   * `YIEM_TOOLS_STRICT=1`: a tool file that fails to load (built-in or from `YIEM_TOOLS_DIR`)
   * stops the process at start, naming every failure, instead of a warning and a start
   * without that tool.
   */
  toolsStrict: boolean;
  /**
   * `PORT`: the coordinator's HTTP port (Bull Board, /healthz, /metrics).
   * @defaultValue `DEFAULTS.port`
   */
  port: number;
  /** `WORKER_PORT`: a tool worker's HTTP port (`/healthz`, `/metrics`); unset means none. */
  workerPort: number | undefined;
  /**
   * `WORKER_HOST`: the address a worker's HTTP side listens on; unset means
   * `DEFAULTS.workerHost`.
   */
  workerHost: string | undefined;
  /**
   * `WORKER_CONCURRENCY`: tool calls one worker runs at once.
   * @defaultValue `DEFAULTS.workerConcurrency`
   */
  workerConcurrency: number;
  /**
   * `YIEM_QUEUES`: the tool queues a worker takes, comma-separated.
   * @defaultValue `DEFAULTS.queues`
   */
  queues: string[];
  /**
   * `YIEM_HTTP_MAX_CONNECTIONS`: connections each HTTP side (the coordinator's, a worker's)
   * holds at once; unset means `HttpLimits`' default (256).
   */
  httpMaxConnections: number | undefined;
  /**
   * `YIEM_COORDINATOR_CONCURRENCY`: sessions one coordinator runs at once.
   * @defaultValue `DEFAULTS.coordinatorConcurrency`
   */
  coordinatorConcurrency: number;
  /**
   * `YIEM_HEAP_GROWTH_PERCENT`: how far a coordinator's heap may grow past what was live after
   * a full garbage collection before the next one, in percent; 0 leaves V8's own factor (up to
   * 4×). See `limitHeapGrowth`.
   * @defaultValue `DEFAULTS.heapGrowthPercent`
   */
  heapGrowthPercent: number;
  /** `YIEM_SYSTEM_PROMPT`; unset means `DEFAULTS.systemPrompt`. */
  systemPrompt: string | undefined;
  /**
   * `YIEM_AGENTS`: a `.json` / `.yaml` file or a module (`.ts`, `.mjs`) of named agent
   * definitions (`loadAgentsFile`). Unset: one agent, `default`, from `YIEM_SYSTEM_PROMPT`,
   * `YIEM_MODEL`, `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
   */
  agentsFile: string | undefined;
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
  /**
   * `YIEM_HEALTH_STALL_MS`: the coordinator's `/healthz` answers 503 once its event loop has
   * been silent this long (default 10,000; unset means the default).
   */
  healthStallMs: number | undefined;
  /** `YIEM_APPROVAL_TIMEOUT_MS`: deny a call awaiting approval on its own after this long (none when unset). */
  approvalTimeoutMs: number | undefined;
  /**
   * `YIEM_MAX_AGENT_DEPTH`: how deep a tree of agents calling agents may grow; a call past it
   * is an error result.
   * @defaultValue `DEFAULTS.maxAgentDepth`
   */
  maxAgentDepth: number;
  /**
   * `YIEM_LEASE_MS`: how long a coordinator's hold on a session lasts without renewal.
   * @defaultValue `DEFAULTS.leaseMs`
   */
  leaseMs: number;
  /**
   * `YIEM_LOCK_MS`: BullMQ's job lock.
   * @defaultValue `DEFAULTS.lockDurationMs`
   */
  lockDurationMs: number;
  /**
   * `YIEM_STALLED_INTERVAL_MS`: BullMQ's stalled-check period.
   * @defaultValue `DEFAULTS.stalledIntervalMs`
   */
  stalledIntervalMs: number;
  /**
   * `YIEM_LIMITED_LOCK_MS`: the lock on the queues of limited tools, when shorter than
   * `YIEM_LOCK_MS`; unset means the worker's default (5 s, see `ToolWorkerOptions`).
   */
  limitedLockDurationMs: number | undefined;
  /**
   * `YIEM_SHUTDOWN_GRACE_MS`: how long a stopping coordinator lets held runs finish before
   * handing them over.
   * @defaultValue `DEFAULTS.shutdownGraceMs`
   */
  shutdownGraceMs: number;
  /**
   * `YIEM_WORKER_DRAIN_MS`: how long a stopping worker lets running calls finish before it exits.
   * @defaultValue `DEFAULTS.workerDrainMs`
   */
  workerDrainMs: number;
  /**
   * `YIEM_MAX_TOOL_CALLS`: a cap on one model message's tool calls.
   * @defaultValue `DEFAULTS.maxToolCalls`
   */
  maxToolCalls: number;
  /**
   * `YIEM_MAX_ARGUMENT_BYTES`: a cap on one tool call's arguments.
   * @defaultValue `DEFAULTS.maxArgumentBytes`
   */
  maxArgumentBytes: number;
  /**
   * `YIEM_MAX_INPUT_BYTES`: the largest input a request may carry (bytes of its JSON).
   * @defaultValue `DEFAULTS.maxInputBytes`
   */
  maxInputBytes: number;
  /**
   * `YIEM_REQUEST_RETENTION_S`: how long a completed request job stays in the coordinator queue
   * when whoever added it set no `removeOnComplete` (failed ones at least a day).
   * @defaultValue `DEFAULTS.requestRetentionS`
   */
  requestRetentionS: number;
  /**
   * `YIEM_MAX_CONTEXT_BYTES`: the transcript sent to the model in one request (earlier tool
   * results, then the oldest turns, then earlier answers left out; see `trimContext`).
   * @defaultValue `DEFAULTS.maxContextBytes`
   */
  maxContextBytes: number;
  /**
   * `YIEM_EVENT_STREAM_MAX_BYTES`: the bytes of events a session's replay stream keeps.
   * @defaultValue `DEFAULTS.eventStreamMaxBytes`
   */
  eventStreamMaxBytes: number;
  /**
   * `LOG_LEVEL`: pino level.
   * @defaultValue `DEFAULTS.logLevel`
   */
  logLevel: string;
}

/** Thrown for a setting that cannot be read; names the variable. Terminal. */
export class ConfigError extends YiemError {
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

/** `YIEM_BUILTIN_TOOLS`: unset → `undefined`, `none` → `[]`, else the names. */
function readBuiltinTools(env: NodeJS.ProcessEnv): string[] | undefined {
  if (readString(env, "YIEM_BUILTIN_TOOLS") === undefined) return undefined;
  const names = readList(env, "YIEM_BUILTIN_TOOLS");
  if (names.length === 1 && names[0]?.toLowerCase() === "none") return [];
  if (names.length === 0 || names.some((name) => name.toLowerCase() === "none")) {
    throw new ConfigError(
      `YIEM_BUILTIN_TOOLS must be none or a comma list of tool names, got "${env.YIEM_BUILTIN_TOOLS}"`,
    );
  }
  return names;
}

/**
 * Reads the configuration from the environment, with `DEFAULTS` (the README lists them).
 * Throws `ConfigError` naming the variable when one is malformed.
 *
 * @example const config = readClusterConfig(); // REDIS_URL=redis://127.0.0.1:6379 by default
 */
export function readClusterConfig(env: NodeJS.ProcessEnv = process.env): ClusterConfig {
  const queues = readList(env, "YIEM_QUEUES");
  const d = DEFAULTS;
  return {
    redisUrl: readString(env, "REDIS_URL") ?? d.redisUrl,
    redisClusterNodes: readList(env, "REDIS_CLUSTER_NODES"),
    shards: readOptionalInt(env, "YIEM_SHARDS"),
    replicaAcks: readOptionalCount(env, "YIEM_REPLICA_ACKS"),
    replicaAckTimeoutMs: readOptionalInt(env, "YIEM_REPLICA_ACK_TIMEOUT_MS"),
    prefix: readString(env, "YIEM_PREFIX") ?? d.prefix,
    openaiBaseUrl: readString(env, "OPENAI_BASE_URL"),
    openaiApiKey: readString(env, "OPENAI_API_KEY"),
    model: readString(env, "YIEM_MODEL") ?? d.model,
    pricesFile: readString(env, "YIEM_PRICES"),
    budgetJson: readString(env, "YIEM_BUDGET"),
    toolsDir: readString(env, "YIEM_TOOLS_DIR"),
    mcpConfig: readString(env, "YIEM_MCP_CONFIG"),
    builtinTools: readBuiltinTools(env),
    httpFetchAllow: readList(env, "YIEM_HTTP_FETCH_ALLOW"),
    toolsStrict: readString(env, "YIEM_TOOLS_STRICT") === "1",
    port: readInt(env, "PORT", d.port),
    workerPort: readOptionalInt(env, "WORKER_PORT"),
    workerHost: readString(env, "WORKER_HOST"),
    workerConcurrency: readInt(env, "WORKER_CONCURRENCY", d.workerConcurrency),
    httpMaxConnections: readOptionalInt(env, "YIEM_HTTP_MAX_CONNECTIONS"),
    queues: queues.length > 0 ? queues : [...d.queues],
    coordinatorConcurrency: readInt(env, "YIEM_COORDINATOR_CONCURRENCY", d.coordinatorConcurrency),
    heapGrowthPercent: readOptionalCount(env, "YIEM_HEAP_GROWTH_PERCENT") ?? d.heapGrowthPercent,
    systemPrompt: readString(env, "YIEM_SYSTEM_PROMPT"),
    agentsFile: readString(env, "YIEM_AGENTS"),
    adminUser: readString(env, "YIEM_ADMIN_USER"),
    adminPassword: readString(env, "YIEM_ADMIN_PASSWORD"),
    adminHost: readString(env, "YIEM_ADMIN_HOST"),
    adminReadOnly: readString(env, "YIEM_ADMIN_READONLY") === "1",
    healthStallMs: readOptionalInt(env, "YIEM_HEALTH_STALL_MS"),
    approvalTimeoutMs: readOptionalInt(env, "YIEM_APPROVAL_TIMEOUT_MS"),
    maxAgentDepth: readInt(env, "YIEM_MAX_AGENT_DEPTH", d.maxAgentDepth),
    leaseMs: readInt(env, "YIEM_LEASE_MS", d.leaseMs),
    lockDurationMs: readInt(env, "YIEM_LOCK_MS", d.lockDurationMs),
    stalledIntervalMs: readInt(env, "YIEM_STALLED_INTERVAL_MS", d.stalledIntervalMs),
    limitedLockDurationMs: readOptionalInt(env, "YIEM_LIMITED_LOCK_MS"),
    shutdownGraceMs: readInt(env, "YIEM_SHUTDOWN_GRACE_MS", d.shutdownGraceMs),
    workerDrainMs: readInt(env, "YIEM_WORKER_DRAIN_MS", d.workerDrainMs),
    maxToolCalls: readInt(env, "YIEM_MAX_TOOL_CALLS", d.maxToolCalls),
    maxArgumentBytes: readInt(env, "YIEM_MAX_ARGUMENT_BYTES", d.maxArgumentBytes),
    maxInputBytes: readInt(env, "YIEM_MAX_INPUT_BYTES", d.maxInputBytes),
    maxContextBytes: readInt(env, "YIEM_MAX_CONTEXT_BYTES", d.maxContextBytes),
    eventStreamMaxBytes: readInt(env, "YIEM_EVENT_STREAM_MAX_BYTES", d.eventStreamMaxBytes),
    requestRetentionS: readInt(env, "YIEM_REQUEST_RETENTION_S", d.requestRetentionS),
    logLevel: readString(env, "LOG_LEVEL") ?? d.logLevel,
  };
}
