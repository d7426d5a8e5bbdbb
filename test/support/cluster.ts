import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connectRedis, type RedisClient, type RedisTarget, YiemClient } from "@yiem/core";
import {
  type ClusterLaunch,
  type ScriptedModelOptions,
  type ScriptedModelServer,
  startClusterProcesses,
  startScriptedModelServer,
  startTestRedis,
  startTestRedisCluster,
  type TestProcess,
  type TestRedis,
  type TestRedisCluster,
} from "@yiem/testing";
import { afterAll, beforeAll } from "vitest";
import { repoRoot, testLaunch } from "./processes.js";
import { printProcessLogsOnFailure } from "./processLogsOnFailure.js";

/** The tool files every test cluster loads besides the built-in tools. */
export const clusterToolsDir = fileURLToPath(new URL("./clusterTools/", import.meta.url));

/**
 * Tool files for a second kind of worker (`YIEM_TOOLS_DIR`): `echoText` defined otherwise
 * than in `clusterToolsDir` (a conflicting definition) and `shoutText`, a tool with its own
 * `prepareArguments` that only these workers have.
 */
export const otherToolsDir = fileURLToPath(new URL("./otherTools/", import.meta.url));

/** Options of `startTestCluster`. */
export interface TestClusterOptions {
  workers?: number;
  coordinators?: number;
  model?: ScriptedModelOptions;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Extra environment for worker processes only (e.g. a REDIS_URL with a worker ACL user). */
  workerEnv?: Record<string, string>;
  /** Extra environment for coordinator processes only (e.g. `YIEM_TOOLS_DIR: ""`: built-ins only). */
  coordinatorEnv?: Record<string, string>;
  /**
   * How the processes run: as deployed (`compiled`: `node apps/…/dist/main.bundle.js`, the default
   * unless `YIEM_TEST_LAUNCH=source`) or from their sources (`source`, with tsx).
   */
  launch?: ClusterLaunch;
  /** How long each process may take to log its ready line (default: the launcher's, 60 s). */
  readyTimeoutMs?: number;
  redis?: {
    privateServer?: boolean;
    appendOnly?: boolean;
    requirePass?: string;
    aclLines?: string[];
    tls?: boolean;
  };
  /** The REDIS_URL the processes and the client use (default: the server's plain URL). */
  redisUrl?: (redis: TestRedis) => string;
  /**
   * Run on a 3+3 Redis Cluster of its own (`startTestRedisCluster`) instead: every process
   * gets `REDIS_CLUSTER_NODES`, the client `{ clusterNodes }`.
   */
  redisCluster?: boolean | { requirePass?: string; aclUsers?: string[][] };
}

/** A real cluster for a test: Redis, a scripted model, coordinator and worker processes, a client. */
export interface TestCluster {
  /** The single Redis; on a Redis Cluster, a stand-in naming the first node (no kill or restart). */
  redis: TestRedis;
  /** The Redis Cluster, when the cluster runs on one. */
  redisCluster?: TestRedisCluster;
  /** Where the processes' Redis is: a URL, or `{ clusterNodes }`. */
  redisTarget: RedisTarget;
  /** A new connection to that Redis (single or cluster); the caller disconnects it. */
  connectRedis(): RedisClient;
  model: ScriptedModelServer;
  client: YiemClient;
  coordinators: TestProcess[];
  workers: TestProcess[];
  /** The HTTP base URL of each coordinator (Bull Board, /healthz, /metrics), by index. */
  coordinatorUrls: string[];
  /** The environment the processes got. */
  env: Record<string, string>;
  /** Starts one more worker named `worker-<n>`. */
  addWorker(): Promise<TestProcess>;
  /** Starts one more worker with extra environment (e.g. its own REDIS_URL). */
  addWorkerWith(env: Record<string, string>): Promise<TestProcess>;
  /** Starts one more coordinator. */
  addCoordinator(): Promise<TestProcess>;
  /** Starts one more coordinator with extra environment (e.g. its own REDIS_CLUSTER_NODES). */
  addCoordinatorWith(env: Record<string, string>): Promise<TestProcess>;
  stop(): Promise<void>;
}

/**
 * Starts a cluster of real processes against a real Redis (see `startTestRedis`): the apps
 * from their sources, through `startClusterProcesses` of `@yiem/testing`. Workers are named
 * `worker-1`, `worker-2`…; short lock and lease times let fault tests recover quickly.
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const redisCluster = options.redisCluster
    ? await startTestRedisCluster(options.redisCluster === true ? {} : options.redisCluster)
    : undefined;
  const redis = redisCluster ? standInFor(redisCluster) : await startTestRedis(options.redis);
  const redisUrl = options.redisUrl?.(redis) ?? redis.url;
  const redisTarget: RedisTarget = redisCluster
    ? { clusterNodes: redisCluster.nodes }
    : clientTarget(redisUrl, redis.caFile);
  const model = await startScriptedModelServer(options.model);
  const env: Record<string, string> = {
    ...(redisCluster ? { REDIS_CLUSTER_NODES: redisCluster.nodesEnv } : { REDIS_URL: redisUrl }),
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test-canary-key",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: clusterToolsDir,
    ...(redis.caFile ? { NODE_EXTRA_CA_CERTS: redis.caFile } : {}),
    YIEM_LEASE_MS: "3000",
    YIEM_LOCK_MS: "4000",
    YIEM_STALLED_INTERVAL_MS: "2000",
    ...options.env,
  };
  const client = new YiemClient({ redis: redisTarget, prefix: redis.prefix });
  const processes = await startClusterProcesses({
    cwd: repoRoot,
    launch: options.launch ?? testLaunch,
    readyTimeoutMs: options.readyTimeoutMs,
    env,
    roleEnv: { coordinator: options.coordinatorEnv, worker: options.workerEnv },
    coordinators: options.coordinators ?? 1,
    workers: options.workers ?? 2,
  }).catch(async (err: unknown) => {
    await client.close();
    await model.close();
    await redis.stop();
    throw err;
  });
  const coordinators = processes.coordinators.map((slot) => slot.current());
  const coordinatorUrls = processes.coordinators.map((slot) => slot.url ?? "");
  const workers = processes.workers.map((slot) => slot.current());
  const addWorkerWith = async (extra: Record<string, string>) => {
    const worker = (await processes.add("worker", { env: extra })).current();
    workers.push(worker);
    return worker;
  };
  const addCoordinatorWith = async (extra: Record<string, string>) => {
    const slot = await processes.add("coordinator", { env: extra });
    coordinators.push(slot.current());
    coordinatorUrls.push(slot.url ?? "");
    return slot.current();
  };
  return {
    redis,
    redisCluster,
    redisTarget,
    connectRedis: () => connectRedis(redisTarget),
    model,
    client,
    coordinators,
    coordinatorUrls,
    workers,
    env,
    addWorker: () => addWorkerWith({}),
    addWorkerWith,
    addCoordinator: () => addCoordinatorWith({}),
    addCoordinatorWith,
    async stop() {
      await client.close();
      await processes.close(3000);
      await model.close();
      await redis.stop();
    },
  };
}

/** A `TestRedis` naming a Redis Cluster's first node, for code that only reads `url` and `prefix`. */
function standInFor(cluster: TestRedisCluster): TestRedis {
  const refuse = async () => {
    throw new Error("kill or restart a Redis Cluster's nodes through `redisCluster`");
  };
  return {
    url: cluster.nodes[0] ?? "",
    prefix: cluster.prefix,
    owned: true,
    kill: refuse,
    restart: refuse,
    stop: () => cluster.stop(),
  };
}

/** The client's Redis target: the URL, or for TLS its parts with the test CA trusted. */
function clientTarget(url: string, caFile: string | undefined): RedisTarget {
  if (!caFile) return url;
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port),
    password: decodeURIComponent(parsed.password) || undefined,
    tls: { ca: readFileSync(caFile) },
  };
}

/**
 * Starts a cluster before the file's tests and stops it after them (vitest hooks), and
 * returns it: a stand-in that forwards to the running cluster, so tests write
 * `cluster.client.send(…)` as usual. After a failed test it prints each process's last log
 * lines. `options` may be a function when they depend on
 * something made first (a ledger file).
 *
 * @example const cluster = useTestCluster({ workers: 2, model: { respond } });
 */
export function useTestCluster(
  options: TestClusterOptions | (() => Promise<TestClusterOptions>),
): TestCluster {
  let current: TestCluster | undefined;
  beforeAll(async () => {
    current = await startTestCluster(typeof options === "function" ? await options() : options);
  }, 240_000); // the launcher gives up first (each process's readyTimeoutMs)
  afterAll(async () => {
    await current?.stop();
  });
  printProcessLogsOnFailure(() => ({
    coordinator: current?.coordinators ?? [],
    worker: current?.workers ?? [],
  }));
  return new Proxy({} as TestCluster, {
    get(_target, property) {
      if (!current) throw new Error("the test cluster is not running (used outside a test?)");
      return current[property as keyof TestCluster];
    },
  });
}
