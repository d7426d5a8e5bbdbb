/**
 * The cluster of the `sessions` scenario, started as deployed: compiled processes
 * (`node apps/…/dist/main.js`), a private `redis-server`, a scripted model that answers after a
 * fixed delay, and a plain BullMQ client of the coordinator queue. Each coordinator is started
 * on demand (one per configuration) against the same Redis, model and tool workers.
 */
import { fileURLToPath } from "node:url";
import {
  freePort,
  logMessage,
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { spawnCommand } from "../../test/support/processes.js";
import { readRedisPid } from "../sampling/processSampler.js";

/** The folder of the bench-only plain-JS tool (`noopStep`), loaded by the compiled processes. */
export const SESSION_TOOLS_DIR = fileURLToPath(new URL("./sessionTools/", import.meta.url));
/** The tool the scripted model calls, twice per run. */
export const SESSION_TOOL = "noopStep";
/** The model's final answer. */
export const SESSION_ANSWER = "done";

const COORDINATOR_COMMAND = ["node", "apps/coordinator/dist/main.js"];
const WORKER_COMMAND = ["node", "apps/tool-worker/dist/main.js"];

/** A coordinator process of the cluster and its HTTP base URL. */
export interface SessionsCoordinator {
  process: TestProcess;
  url: string;
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
  /** Starts a coordinator with `YIEM_COORDINATOR_CONCURRENCY=concurrency`. */
  startCoordinator(concurrency: number): Promise<SessionsCoordinator>;
  close(): Promise<void>;
}

/**
 * The scripted model: a request that ends with tool results gets the final text answer; any
 * other gets two parallel `noopStep` calls. Both after `delayMs`.
 */
export function chooseSessionReply(request: ScriptedRequest, delayMs: number): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role?: string }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: SESSION_ANSWER, delayMs };
  return {
    kind: "toolCalls",
    delayMs,
    calls: [
      { id: "call_a", name: SESSION_TOOL, arguments: { label: "a" } },
      { id: "call_b", name: SESSION_TOOL, arguments: { label: "b" } },
    ],
  };
}

/** The environment every process of the cluster gets (the README's variables). */
function clusterEnv(redis: TestRedis, model: ScriptedModelServer): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-bench-sessions",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: SESSION_TOOLS_DIR,
    LOG_LEVEL: "info", // the deployed default (the test helper would say debug)
  };
}

/** Resolves once `process` logged `message`; fails unless that line lists the session tool. */
async function waitReadyWithTool(process: TestProcess, message: string): Promise<void> {
  const line = await process.waitForLine(logMessage(message), 30_000);
  if (!line.includes(`"${SESSION_TOOL}"`))
    throw new Error(`${message} without the ${SESSION_TOOL} tool: ${line}`);
}

async function startWorker(env: Record<string, string>, id: string): Promise<TestProcess> {
  const worker = spawnCommand(WORKER_COMMAND, { ...env, YIEM_WORKER_ID: id });
  try {
    await waitReadyWithTool(worker, "tool worker ready");
    return worker;
  } catch (err) {
    await worker.stop(500);
    throw err;
  }
}

/** `node --cpu-prof` flags when `BENCH_CPU_PROF_DIR` asks for profiles, else none. */
function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

async function startCoordinatorProcess(
  env: Record<string, string>,
  concurrency: number,
): Promise<SessionsCoordinator> {
  const port = await freePort();
  const [node = "node", ...args] = COORDINATOR_COMMAND;
  const process = spawnCommand([node, ...profileFlags(), ...args], {
    ...env,
    PORT: String(port),
    YIEM_COORDINATOR_CONCURRENCY: String(concurrency),
  });
  try {
    await waitReadyWithTool(process, "coordinator ready");
    return { process, url: `http://127.0.0.1:${port}` };
  } catch (err) {
    await process.stop(500);
    throw err;
  }
}

/** Opens the plain BullMQ client of the coordinator queue. */
async function openClient(redis: TestRedis) {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const prefix = `${redis.prefix}:bull`;
  const queue = new Queue("coordinator", { connection, prefix });
  const eventsConnection = connection.duplicate();
  const events = new QueueEvents("coordinator", { connection: eventsConnection, prefix });
  events.setMaxListeners(0);
  await events.waitUntilReady();
  return { connection, queue, events, eventsConnection };
}

/**
 * Starts Redis, the scripted model (every answer after `modelDelayMs`), `workers` compiled tool
 * workers and the BullMQ client; coordinators come later, one per configuration.
 */
export async function openSessionsCluster(
  modelDelayMs: number,
  workers: number,
): Promise<SessionsCluster> {
  const redis = await startTestRedis({ privateServer: true });
  const model = await startScriptedModelServer({
    respond: (request) => chooseSessionReply(request, modelDelayMs),
  });
  const env = clusterEnv(redis, model);
  const started: TestProcess[] = [];
  const client = await openClient(redis);
  const close = async () => {
    await client.events.close().catch(() => undefined);
    await client.queue.close().catch(() => undefined);
    client.eventsConnection.disconnect();
    client.connection.disconnect();
    await Promise.all(started.map((p) => p.stop(5000)));
    await model.close();
    await redis.stop();
  };
  try {
    for (let i = 1; i <= workers; i++) started.push(await startWorker(env, `bench-worker-${i}`));
    return {
      redis,
      redisPid: await readRedisPid(client.connection),
      model,
      workers: [...started],
      connection: client.connection,
      queue: client.queue,
      events: client.events,
      async startCoordinator(concurrency) {
        const coordinator = await startCoordinatorProcess(env, concurrency);
        started.push(coordinator.process);
        return coordinator;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
