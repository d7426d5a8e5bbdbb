import { spawnSync } from "node:child_process";
import { type RedisTarget, readGivenSetting } from "@yiem/core";
import { startTestRedis } from "@yiem/testing";

/** The Redis the demo uses and how to let go of it. */
export interface DemoRedis {
  /** The environment that points a Yiem process at it (`REDIS_URL` or `REDIS_CLUSTER_NODES`). */
  env: Record<string, string>;
  /** The same, for a `YiemClient`. */
  target: RedisTarget;
  prefix: string;
  source: string;
  stop(): Promise<void>;
}

/** A demo Redis at a single URL. */
function atUrl(url: string, prefix: string, source: string, stop = async () => {}): DemoRedis {
  return { env: { REDIS_URL: url }, target: url, prefix, source, stop };
}

function hasRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

async function startContainer(): Promise<DemoRedis> {
  const { GenericContainer } = await import("testcontainers");
  const container = await new GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
  const url = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
  return atUrl(url, "yiem-demo", "a Redis container (testcontainers)", async () => {
    await container.stop();
  });
}

/**
 * Finds a Redis for the demo: the Redis Cluster of `REDIS_CLUSTER_NODES` when set, else
 * `REDIS_URL`, else a private `redis-server` from PATH, else a Redis container through
 * testcontainers. Throws with what to install when none works.
 */
export async function startDemoRedis(): Promise<DemoRedis> {
  const prefix = `yiem-demo-${Date.now().toString(36)}`;
  const nodes = readGivenSetting("redisClusterNodes") ?? [];
  if (nodes.length > 0) {
    return {
      env: { REDIS_CLUSTER_NODES: nodes.join(",") },
      target: { clusterNodes: nodes },
      prefix,
      source: `the Redis Cluster of REDIS_CLUSTER_NODES (${nodes.length} seed nodes)`,
      stop: async () => {},
    };
  }
  const url = readGivenSetting("redisUrl");
  if (url) return atUrl(url, prefix, "REDIS_URL");
  if (hasRedisServer()) {
    const redis = await startTestRedis({ privateServer: true });
    return atUrl(redis.url, prefix, "a private redis-server", redis.stop);
  }
  try {
    return await startContainer();
  } catch (err) {
    throw new Error(
      `no Redis: set REDIS_URL, install redis-server (apt-get install redis-server), or run a Docker engine for testcontainers (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
