import { DEFAULT_SYSTEM_PROMPT } from "../loop/agentState.js";
import { DEFAULT_MAX_INPUT_BYTES } from "../loop/toUserMessage.js";
import { DEFAULT_MAX_CONTEXT_BYTES } from "../loop/trimContext.js";
import { DEFAULT_CLUSTER_SHARDS } from "../redis/keys.js";
import { DEFAULT_STREAM_MAX_BYTES } from "../state/eventBus.js";
import { DEFAULT_MAX_TOOL_CALLS } from "../tools/extractToolCalls.js";
import {
  DEFAULT_MAX_ARGUMENT_BYTES,
  DEFAULT_MAX_ARGUMENT_DEPTH,
} from "../tools/parseToolArguments.js";

/**
 * Every default of Yiem's cluster, in one place: what a process uses when neither its options
 * nor its environment (`readClusterConfig`, the README's table) say otherwise. Named as the
 * `ClusterConfig` fields they fill. The caps that the tool lifecycle applies on its own
 * (`maxToolCalls`, `maxArgumentBytes`, `maxArgumentDepth`, `maxInputBytes`, `maxContextBytes`, `systemPrompt`)
 * and the shard count the key layout needs are defined beside the code that applies them
 * (those folders import nothing of `ops/`) and listed here.
 */
export const DEFAULTS = {
  /** `REDIS_URL`: a Redis on this host. */
  redisUrl: "redis://127.0.0.1:6379",
  /** `YIEM_PREFIX`: the namespace of every key and queue. */
  prefix: "yiem",
  /** `YIEM_SHARDS` on a Redis Cluster, so tool traffic spreads over the masters (1 on a single Redis). */
  clusterShards: DEFAULT_CLUSTER_SHARDS,
  /** `YIEM_REPLICA_ACKS` on a Redis Cluster: replicas that acknowledge each session write (0 on a single Redis). */
  clusterReplicaAcks: 1,
  /** `YIEM_REPLICA_ACK_TIMEOUT_MS`: how long a session write waits for those acknowledgements. */
  replicaAckTimeoutMs: 250,
  /** `YIEM_MODEL`. */
  model: "gpt-4o-mini",
  /**
   * The agent a coordinator's runs belong to: the `agent` label of the usage metrics
   * (`yiem_llm_tokens_total`, `yiem_model_calls_total`, `yiem_llm_cost_usd_total`). One agent
   * for now; named agents will set their own.
   */
  agentName: "default",
  /** `YIEM_SYSTEM_PROMPT`. */
  systemPrompt: DEFAULT_SYSTEM_PROMPT,
  /** `PORT`: the coordinator's HTTP port (Bull Board, /healthz, /metrics). */
  port: 3000,
  /** `WORKER_HOST`: the address a worker's HTTP side listens on (this host only). */
  workerHost: "127.0.0.1",
  /** `WORKER_CONCURRENCY`: calls one worker runs at once, per tool queue. */
  workerConcurrency: 16,
  /** `YIEM_QUEUES`: the tool queues a worker takes. */
  queues: ["default"],
  /**
   * `YIEM_COORDINATOR_CONCURRENCY`: sessions one coordinator runs at once. Runs mostly wait on
   * the model, so a coordinator can hold many: at 2,000 live sessions one process stayed under
   * 300 MB and answered /healthz within 200 ms at p99 (docs/PERFORMANCE.md, "Sessions"), while
   * 64 left it idle behind a slow model.
   */
  coordinatorConcurrency: 512,
  /**
   * `YIEM_HEAP_GROWTH_PERCENT`: a coordinator's heap growth, 150 % past the live heap (2.5×).
   * With 2,000 sessions at once, V8's own factor let the heap fill with garbage to about 300 MB
   * of RSS; this keeps it near 250 MB at no CPU cost measurable on the benchmark.
   */
  heapGrowthPercent: 150,
  /** `YIEM_MAX_AGENT_DEPTH`: how many agents deep a tree of child runs may nest (the root is 0). */
  maxAgentDepth: 5,
  /** `YIEM_LEASE_MS`: how long a coordinator's hold on a session lasts without renewal. */
  leaseMs: 10_000,
  /** `YIEM_LOCK_MS`: BullMQ's job lock; a process silent this long is considered dead. */
  lockDurationMs: 30_000,
  /** `YIEM_STALLED_INTERVAL_MS`: how often BullMQ looks for stalled jobs. */
  stalledIntervalMs: 30_000,
  /**
   * `YIEM_LIMITED_LOCK_MS`: the job lock on the queues of limited tools (a dead worker's call
   * holds a cluster-wide slot until it expires), when shorter than `lockDurationMs`.
   */
  limitedLockDurationMs: 5000,
  /** `YIEM_SHUTDOWN_GRACE_MS`: how long a stopping coordinator lets held runs finish before handing them over. */
  shutdownGraceMs: 10_000,
  /** `YIEM_WORKER_DRAIN_MS`: how long a stopping worker lets running calls finish before it exits. */
  workerDrainMs: 30_000,
  /** `YIEM_MAX_TOOL_CALLS`: tool calls one model message may carry. */
  maxToolCalls: DEFAULT_MAX_TOOL_CALLS,
  /** `YIEM_MAX_ARGUMENT_BYTES`: the arguments of one tool call. */
  maxArgumentBytes: DEFAULT_MAX_ARGUMENT_BYTES,
  /** `YIEM_MAX_ARGUMENT_DEPTH`: how deeply one tool call's arguments may nest objects and arrays. */
  maxArgumentDepth: DEFAULT_MAX_ARGUMENT_DEPTH,
  /** `YIEM_MAX_INPUT_BYTES`: the largest input a request may carry (bytes of its JSON). */
  maxInputBytes: DEFAULT_MAX_INPUT_BYTES,
  /** `YIEM_MAX_CONTEXT_BYTES`: the transcript sent to the model in one request (oldest turns dropped). */
  maxContextBytes: DEFAULT_MAX_CONTEXT_BYTES,
  /** `YIEM_EVENT_STREAM_MAX_BYTES`: the bytes of events a session's replay stream keeps. */
  eventStreamMaxBytes: DEFAULT_STREAM_MAX_BYTES,
  /** `YIEM_REQUEST_RETENTION_S`: seconds a completed request job is kept when its producer set no retention. */
  requestRetentionS: 3600,
  /** `LOG_LEVEL`: pino level. */
  logLevel: "info",
  /** A tool's `retries`: how many times a remote call whose worker died is tried again. */
  toolRetries: 0,
  /** How long `YiemClient.waitForResponse` waits. */
  responseTimeoutMs: 120_000,
  /** How long `YiemClient.approve` and `deny` wait for a coordinator to record the decision. */
  decisionTimeoutMs: 30_000,
} as const;
