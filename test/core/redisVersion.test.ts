import { connectRedis } from "@yiem/core";
import { unsupportedRedisVersion } from "@yiem/core/internal";
import { startTestRedis } from "@yiem/testing";
import { describe, expect, it } from "vitest";

describe("the Redis version Yiem needs", () => {
  it("names a Redis older than 7.0 and its version", () => {
    const problem = unsupportedRedisVersion(
      "# Server\r\nredis_version:6.2.14\r\nredis_mode:standalone\r\n",
    );
    expect(problem).toContain("Redis 7.0.0 or newer");
    expect(problem).toContain("6.2.14");
  });

  it("takes 7.0 and newer, and judges no reply without a version", () => {
    expect(unsupportedRedisVersion("redis_version:7.0.0\r\n")).toBeUndefined();
    expect(unsupportedRedisVersion("redis_version:7.2.4\r\n")).toBeUndefined();
    expect(unsupportedRedisVersion("redis_version:10.0.1\r\n")).toBeUndefined();
    expect(unsupportedRedisVersion("# Server\r\n")).toBeUndefined();
  });

  it("takes the Redis this machine runs", async () => {
    const server = await startTestRedis();
    const redis = connectRedis(server.url);
    try {
      expect(unsupportedRedisVersion(await redis.info("server"))).toBeUndefined();
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
