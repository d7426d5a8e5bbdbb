/**
 * When a process's heartbeat thread starts (`startAliveBeat`): once the process did its first
 * piece of work, or `BEAT_THREAD_START_MS` after the heartbeat started, so its boot does not
 * compete with a replacement coordinator's start and first run; the main thread beats until
 * then. Its own process (vitest project `own-process`): it sets the process's first piece of
 * work, which is process-wide. The thread is seen as an OS thread of this process
 * (`/proc/self/task`), there from the moment it is created (a worker thread may start more
 * later: only counts taken before any thread of the heartbeat's are compared exactly).
 */
import { readdirSync } from "node:fs";
import { markProcessWarm, type ProcessRuntime, startProcessRuntime } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: TestRedis;
const started: ProcessRuntime[] = [];

beforeAll(async () => {
  server = await startTestRedis();
});

afterAll(async () => {
  for (const runtime of started.splice(0)) {
    await runtime.alive.stop();
    runtime.watch.stop();
    runtime.subscriber.disconnect();
    runtime.command.disconnect();
  }
  await server?.stop();
});

/** How many OS threads this process has. */
function threadCount(): number {
  return readdirSync("/proc/self/task").length;
}

/** A process runtime on the test Redis with the production heartbeat TTL. */
function startRuntime(name: string): ProcessRuntime {
  const runtime = startProcessRuntime({
    redis: server.url,
    prefix: `${server.prefix}-${name}`,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    aliveTtlMs: 1500,
  });
  started.push(runtime);
  return runtime;
}

/** Resolves when `check` holds, polling every 20 ms; rejects after `ms`. */
async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The life's expiry in Redis, against Redis's clock now (ms). */
async function lifeLeftMs(runtime: ProcessRuntime): Promise<number> {
  const [seconds, micros] = await runtime.command.time();
  const aliveUntil = await runtime.command.zscore(runtime.keys.alive, runtime.lifeId);
  return Number(aliveUntil) - (Number(seconds) * 1000 + Number(micros) / 1000);
}

describe.skipIf(process.platform !== "linux")("a process's heartbeat thread", () => {
  it("starts BEAT_THREAD_START_MS after the heartbeat when the process did no work, the main thread beating until then", async () => {
    const before = threadCount();
    const startedAt = Date.now();
    const runtime = startRuntime("idle");
    expect(threadCount()).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(threadCount()).toBe(before);
    expect(await lifeLeftMs(runtime)).toBeGreaterThan(0);
    await until(() => threadCount() > before, 5000);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
  });

  it("starts once the process did its first piece of work", async () => {
    const runtime = startRuntime("warm");
    await runtime.command.ping();
    // Created at once (other threads of this process may start threads of their own later).
    const before = threadCount();
    markProcessWarm();
    expect(threadCount()).toBeGreaterThan(before);
    // The thread beats on: the life stays alive past its ttl.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await lifeLeftMs(runtime)).toBeGreaterThan(0);
  });
});
