/**
 * The cluster of the `sessions` scenario, started as deployed: compiled processes
 * (`node apps/…/dist/main.js`), a private `redis-server`, a scripted model that answers after a
 * fixed delay, and a plain BullMQ client of the coordinator queue. Each coordinator is started
 * on demand (one per configuration) against the same Redis, model and tool workers.
 */
import { fileURLToPath } from "node:url";
import {
  type AddProcessOptions,
  type ClusterRole,
  type ScriptedModelServer,
  type ScriptedRateLimits,
  type ScriptedReply,
  type ScriptedRequest,
  startClusterProcesses,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import type { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { openPlainCoordinatorQueue } from "../../test/support/openPlainCoordinatorQueue.js";
import { repoRoot } from "../../test/support/processes.js";
import { readRedisPid } from "../sampling/processSampler.js";

/**
 * The folder of the bench-only plain-JS tools (`noopStep`, `progressStep`), loaded by the
 * compiled processes.
 */
export const SESSION_TOOLS_DIR = fileURLToPath(new URL("./sessionTools/", import.meta.url));
/** The tool the scripted model calls, twice per run. */
export const SESSION_TOOL = "noopStep";
/** The tool it calls instead when the input asks for progress: one partial result each. */
export const PROGRESS_TOOL = "progressStep";
/** The input of a run whose tools report progress (any other input runs `noopStep`). */
export const PROGRESS_INPUT = "run both steps with progress";
/** The model's final answer. */
export const SESSION_ANSWER = "done";

/** A coordinator process of the cluster and its HTTP base URL. */
export interface SessionsCoordinator {
  process: TestProcess;
  url: string;
}

/** What a coordinator of the cluster gets beyond the cluster's environment. */
export interface CoordinatorOptions {
  env?: Record<string, string>;
  /** Flags for `node` before the entry point. */
  nodeFlags?: string[];
}

/** The running cluster. */
export interface SessionsCluster {
  redis: TestRedis;
  /** The redis-server's pid (`INFO server` `process_id`). */
  redisPid: number;
  model: ScriptedModelServer;
  workers: TestProcess[];
  /** The plain BullMQ client's connection (also used for `INFO`). */
  connection: Redis;
  queue: Queue;
  events: QueueEvents;
  /** The environment every process of the cluster gets (Redis, prefix, model, tools). */
  env: Record<string, string>;
  /**
   * Starts a coordinator with `YIEM_COORDINATOR_CONCURRENCY=concurrency` (and `options.env`,
   * e.g. `YIEM_AGENTS`; `options.nodeFlags`, e.g. `--inspect`).
   */
  startCoordinator(concurrency: number, options?: CoordinatorOptions): Promise<SessionsCoordinator>;
  /** Starts a compiled gateway with the cluster's environment and `env` on top. */
  startGateway(env: Record<string, string>): Promise<{ url: string; process: TestProcess }>;
  close(): Promise<void>;
}

/**
 * The scripted model: a request that ends with tool results gets the final text answer; any
 * other gets two parallel calls of `tool` (`noopStep`, or `progressStep` when the input is
 * `PROGRESS_INPUT`, or the tool `chooseTool` picks from the input). All after `delayMs`.
 */
export function chooseSessionReply(
  request: ScriptedRequest,
  delayMs: number,
  chooseTool: (input: string) => string = chooseSessionTool,
): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: SESSION_ANSWER, delayMs };
  const name = chooseTool(readText(messages.findLast((m) => m.role === "user")?.content));
  return {
    kind: "toolCalls",
    delayMs,
    calls: [
      { id: "call_a", name, arguments: { label: "a" } },
      { id: "call_b", name, arguments: { label: "b" } },
    ],
  };
}

/** A message's text: its string content, or its text parts joined. */
function readText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { text?: unknown }) => String(part?.text ?? "")).join("");
}

/** `progressStep` for `PROGRESS_INPUT`, else `noopStep`. */
function chooseSessionTool(input: string): string {
  return input === PROGRESS_INPUT ? PROGRESS_TOOL : SESSION_TOOL;
}

/** How a sessions cluster is started beyond its model's delay and its workers. */
export interface SessionsClusterOptions {
  /** The folder of tool files every process loads. @defaultValue `SESSION_TOOLS_DIR` */
  toolsDir?: string;
  /** Picks the tool the model calls twice from the run's input. @defaultValue by `PROGRESS_INPUT` */
  chooseTool?: (input: string) => string;
  /** Answers every model request instead (`chooseSessionReply` and `chooseTool` then unused). */
  respond?: (request: ScriptedRequest) => ScriptedReply;
  /** Limits the model as a provider does (429 past them; tool definitions count as prompt tokens). Default: none. */
  modelLimits?: ScriptedRateLimits;
}

/** The environment every process of the cluster gets (the README's variables). */
function clusterEnv(
  redis: TestRedis,
  model: ScriptedModelServer,
  toolsDir: string,
): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-bench-sessions",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: toolsDir,
    LOG_LEVEL: "info", // the deployed default (the test helper would say debug)
  };
}

/** `node --cpu-prof` flags when `BENCH_CPU_PROF_DIR` asks for profiles, else none. */
function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/**
 * Starts Redis, the scripted model (every answer after `modelDelayMs`), `workers` compiled tool
 * workers and the BullMQ client; coordinators come later, one per configuration.
 */
export async function openSessionsCluster(
  modelDelayMs: number,
  workers: number,
  options: SessionsClusterOptions = {},
): Promise<SessionsCluster> {
  const redis = await startTestRedis({ privateServer: true });
  const model = await startScriptedModelServer({
    ...(options.modelLimits ? { limits: options.modelLimits, countToolTokens: true } : {}),
    respond:
      options.respond ??
      ((request) => chooseSessionReply(request, modelDelayMs, options.chooseTool)),
  });
  const env = clusterEnv(redis, model, options.toolsDir ?? SESSION_TOOLS_DIR);
  const client = await openPlainCoordinatorQueue(redis.url, redis.prefix);
  const closeServers = async () => {
    await client.close();
    await model.close();
    await redis.stop();
  };
  const processes = await startClusterProcesses({
    cwd: repoRoot,
    launch: "compiled",
    env,
    coordinators: 0,
    workers,
    readyTimeoutMs: 90_000,
    expectTools: [SESSION_TOOL],
  }).catch(async (err: unknown) => {
    await closeServers();
    throw err;
  });
  const close = async () => {
    await processes.close(5000);
    await closeServers();
  };
  const add = async (role: ClusterRole, options: AddProcessOptions) => {
    const slot = await processes.add(role, options);
    return { process: slot.current(), url: slot.url ?? "" };
  };
  try {
    return {
      redis,
      redisPid: await readRedisPid(client.connection),
      model,
      workers: processes.workers.map((slot) => slot.current()),
      connection: client.connection,
      queue: client.queue,
      events: client.events,
      env,
      startCoordinator: (concurrency, options = {}) =>
        add("coordinator", {
          env: { ...options.env, YIEM_COORDINATOR_CONCURRENCY: String(concurrency) },
          nodeFlags: [...profileFlags(), ...(options.nodeFlags ?? [])],
        }),
      startGateway: (extra) => add("gateway", { env: extra }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
