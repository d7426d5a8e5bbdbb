/**
 * The per-tool limits stored in Redis (BullMQ's global concurrency and rate limit, on a tool
 * queue's meta) as real coordinator and worker processes leave them: a process that finds
 * limits other than its tools' warns, naming tool, queue and both values, and sets its own;
 * one whose tool no longer declares a limit removes it; a tool whose name or queue would break
 * a queue name is skipped with a clear line instead of stopping the process. Read back with
 * plain BullMQ.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  LOG_LEVELS,
  logEntries,
  logMessage,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { spawnApp } from "../support/processes.js";

const DIFFER = "tool limit in Redis differs from this process's; setting this process's";

/** A tool file's text: a tool `name` with the given extra fields (limits, queue). */
function toolFile(name: string, fields: string): string {
  return `export function getTool() {
  return { name: ${JSON.stringify(name)}, label: "L", description: "d",
    inputSchema: { type: "object" }, parallelToolExecute: true, ${fields},
    execute: () => ({ content: [{ type: "text", text: "ok" }], details: {} }) };
}
`;
}

let redis: TestRedis;
let toolsDir: string;
const started: TestProcess[] = [];
const queues: Queue[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop(3000)));
  await Promise.all(queues.splice(0).map((q) => q.close()));
  await rm(toolsDir, { recursive: true, force: true });
});

afterAll(async () => {
  await redis?.stop();
});

/** A tool queue as plain BullMQ opens it (`tools-<queue>` under `<prefix>:bull`). */
function toolQueue(queue: string): Queue {
  const opened = new Queue(`tools-${queue}`, {
    connection: { url: redis.url },
    prefix: `${redis.prefix}:bull`,
  });
  queues.push(opened);
  return opened;
}

/** Writes `files` (file name → text) into a fresh tools folder. */
async function writeTools(files: Record<string, string>): Promise<void> {
  toolsDir = await mkdtemp(join(tmpdir(), "yiem-limit-tools-"));
  for (const [file, text] of Object.entries(files)) await writeFile(join(toolsDir, file), text);
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    YIEM_TOOLS_DIR: toolsDir,
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    OPENAI_API_KEY: "sk-test",
    ...extra,
  };
}

async function startWorker(extra: Record<string, string> = {}): Promise<TestProcess> {
  const worker = spawnApp("apps/tool-worker/src/main.ts", env(extra));
  started.push(worker);
  await worker.waitForLine(logMessage("tool worker ready"), 30_000);
  return worker;
}

async function startCoordinator(): Promise<TestProcess> {
  const coordinator = spawnApp("apps/coordinator/src/main.ts", {
    ...env(),
    PORT: String(await freePort()),
  });
  started.push(coordinator);
  await coordinator.waitForLine(logMessage("coordinator ready"), 30_000);
  return coordinator;
}

describe("per-tool limits stored in Redis", () => {
  it("a worker that finds other limits on its tool's queue warns with tool, queue and both values, and sets its own", async () => {
    const queue = toolQueue("tool.quota");
    await queue.setGlobalConcurrency(5);
    await queue.setGlobalRateLimit(10, 1000);
    await writeTools({
      "quota.mjs": toolFile("quota", "concurrency: 2, rateLimit: { max: 3, durationMs: 1000 }"),
    });
    const worker = await startWorker();
    const warnings = logEntries(worker, DIFFER);
    expect(warnings.map((w) => w.level)).toEqual([LOG_LEVELS.warn, LOG_LEVELS.warn]);
    expect(warnings).toEqual([
      expect.objectContaining({
        tool: "quota",
        queue: "tools-tool.quota",
        limit: "concurrency",
        stored: 5,
        declared: 2,
      }),
      expect.objectContaining({
        tool: "quota",
        queue: "tools-tool.quota",
        limit: "rateLimit",
        stored: { max: 10, durationMs: 1000 },
        declared: { max: 3, durationMs: 1000 },
      }),
    ]);
    expect(await queue.getGlobalConcurrency()).toBe(2);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 3, duration: 1000 });
  });

  it("a coordinator clears the limits its tools no longer declare, and leaves the ones they do", async () => {
    const own = toolQueue("tool.trimmed");
    await own.setGlobalConcurrency(2);
    await own.setGlobalRateLimit(5, 1000);
    const named = toolQueue("gpu");
    await named.setGlobalConcurrency(4);
    await writeTools({
      "trimmed.mjs": toolFile("trimmed", "concurrency: 2"), // its rateLimit was removed
      "gpuJob.mjs": toolFile("gpuJob", 'queue: "gpu"'), // its concurrency was removed
    });
    const coordinator = await startCoordinator();
    expect(await own.getGlobalConcurrency()).toBe(2);
    expect(await own.getGlobalRateLimit()).toBeNull();
    expect(await named.getGlobalConcurrency()).toBeNull();
    expect(logEntries(coordinator, DIFFER)).toEqual([]);
  });

  it("a worker whose tools lost their limits clears them on the queues it serves", async () => {
    const own = toolQueue("tool.unlimited");
    await own.setGlobalConcurrency(1);
    await writeTools({ "unlimited.mjs": toolFile("unlimited", "retries: 0") });
    await startWorker();
    expect(await own.getGlobalConcurrency()).toBeNull();
  });

  it("a coordinator starts with a limited tool whose queue or name holds a ':' skipped, naming the tool and its file", async () => {
    await writeTools({
      "gpuColon.mjs": toolFile("gpuColon", 'queue: "gpu:1", concurrency: 1'),
      "nameColon.mjs": toolFile("search:web", "concurrency: 1"),
    });
    const coordinator = await startCoordinator();
    const skipped = logEntries(coordinator, "tool file skipped");
    expect(skipped).toEqual([
      expect.objectContaining({
        path: join(toolsDir, "gpuColon.mjs"),
        error: expect.stringMatching(/^tool\.queue "gpu:1" of tool "gpuColon" must match/),
      }),
      expect.objectContaining({
        path: join(toolsDir, "nameColon.mjs"),
        error: expect.stringMatching(/^tool\.name "search:web" must match/),
      }),
    ]);
  });
});
