import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

/** Runs `npm run demo -- --once` as a user would and returns what it printed. */
function runDemo(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    for (const name of ["REDIS_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"]) delete env[name];
    const child = spawn("npm", ["run", "-s", "demo", "--", "--once"], { cwd: repoRoot, env });
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
    expect(code).toBe(0);
    expect(output).toContain("Offline: a scripted model is answering");
    expect(output).toMatch(/Bull Board: http:\/\/127\.0\.0\.1:\d+\/admin\/queues/);
    const workers = new Set(output.match(/ on worker-\d/g));
    expect(workers.size).toBeGreaterThanOrEqual(2);
    expect(output.match(/✔ getWeather/g)).toHaveLength(3);
    expect(output.match(/✔ getTime/g)).toHaveLength(3);
    expect(output).toContain("The status page says STATUS: all green, 3 regions up.");
  }, 90_000);
});
