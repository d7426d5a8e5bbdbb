/**
 * README.md's first command, `npm run demo`, as a user runs it: `npm run demo -- --once` in the
 * repository, offline, prints the answer and exits 0.
 */
import { spawn } from "node:child_process";
import { redisSupportsCluster, startTestRedisCluster } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

/**
 * Runs `npm run demo -- --once [question]` as a user would (with `extraEnv`) and returns what
 * it printed.
 */
function runDemo(
  extraEnv: Record<string, string> = {},
  question?: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    for (const name of ["REDIS_URL", "REDIS_CLUSTER_NODES", "OPENAI_BASE_URL", "OPENAI_API_KEY"])
      delete env[name];
    Object.assign(env, extraEnv);
    const args = ["run", "-s", "demo", "--", "--once", ...(question ? [question] : [])];
    const child = spawn("npm", args, { cwd: repoRoot, env });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("npm run demo", () => {
  it("starts a cluster offline, shows parallel calls landing on different workers, answers and exits", async () => {
    const { code, output } = await runDemo();
    expect(code, output).toBe(0);
    expect(output).toContain("Offline: a scripted model is answering");
    expect(output).toMatch(/Bull Board: http:\/\/127\.0\.0\.1:\d+\/admin\/queues/);
    const workers = new Set(output.match(/ on worker-\d/g));
    expect(workers.size).toBeGreaterThanOrEqual(2);
    expect(output.match(/✔ getWeather/g)).toHaveLength(3);
    expect(output.match(/✔ getTime/g)).toHaveLength(3);
    expect(output).toContain("The status page says STATUS: all green, 3 regions up.");
  }, 90_000);

  it("answers the question asked: the time in Paris is one getTime call, and no weather", async () => {
    const { code, output } = await runDemo({}, "What time is it in Paris?");
    expect(code, output).toBe(0);
    expect(output.match(/✔ getTime/g)).toHaveLength(1);
    expect(output).toContain("Europe/Paris");
    expect(output).not.toContain("getWeather");
    expect(output).not.toContain("status page says");
  }, 90_000);

  it.skipIf(!redisSupportsCluster())(
    "runs the same on a Redis Cluster with REDIS_CLUSTER_NODES set",
    async () => {
      const redisCluster = await startTestRedisCluster();
      try {
        const { code, output } = await runDemo({ REDIS_CLUSTER_NODES: redisCluster.nodesEnv });
        expect(code, output).toBe(0);
        expect(output).toContain("Redis: the Redis Cluster of REDIS_CLUSTER_NODES (6 seed nodes)");
        expect(new Set(output.match(/ on worker-\d/g)).size).toBeGreaterThanOrEqual(2);
        expect(output.match(/✔ getWeather/g)).toHaveLength(3);
        expect(output).toContain("The status page says STATUS: all green, 3 regions up.");
      } finally {
        await redisCluster.stop();
      }
    },
    120_000,
  );
});
