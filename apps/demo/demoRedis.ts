import { spawnSync } from "node:child_process";
import { startTestRedis } from "../../test/support/redisServer.js";

/** The Redis the demo uses and how to let go of it. */
export interface DemoRedis {
  url: string;
  prefix: string;
  source: string;
  stop(): Promise<void>;
}

function hasRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

async function startContainer(): Promise<DemoRedis> {
  const { GenericContainer } = await import("testcontainers");
  const container = await new GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
  const url = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
  return {
    url,
    prefix: "yiem-demo",
    source: "a Redis container (testcontainers)",
    stop: async () => void (await container.stop()),
  };
}

/**
 * Finds a Redis for the demo: `REDIS_URL` when set, else a private `redis-server` from PATH,
 * else a Redis container through testcontainers. Throws with what to install when none works.
 */
export async function startDemoRedis(): Promise<DemoRedis> {
  const prefix = `yiem-demo-${Date.now().toString(36)}`;
  if (process.env.REDIS_URL) {
    return { url: process.env.REDIS_URL, prefix, source: "REDIS_URL", stop: async () => {} };
  }
  if (hasRedisServer()) {
    const redis = await startTestRedis({ privateServer: true });
    return { url: redis.url, prefix, source: "a private redis-server", stop: redis.stop };
  }
  try {
    return await startContainer();
  } catch (err) {
    throw new Error(
      `no Redis: set REDIS_URL, install redis-server (apt-get install redis-server), or run a Docker engine for testcontainers (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
