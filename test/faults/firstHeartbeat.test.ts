/**
 * A process's life is in the `alive` set before any lock or lease can name it: the first beat
 * goes on the command connection at start, ahead of every command the process sends, rather
 * than waiting for the heartbeat thread to boot. A process SIGKILLed right after it got ready
 * (as in the peers bench's worker kill test) used to hold tokens of a life the failure
 * detector never saw, so its jobs waited for their 30 s locks.
 */
import { type ProcessRuntime, startProcessRuntime } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHoldingProxy } from "../support/holdingProxy.js";

let server: TestRedis;
const started: ProcessRuntime[] = [];

beforeAll(async () => {
  server = await startTestRedis();
});

afterAll(async () => {
  for (const runtime of started.splice(0)) await stopRuntime(runtime);
  await server?.stop();
});

/** A process runtime on the test Redis with the production heartbeat TTL. */
function startRuntime(prefix: string, aliveTtlMs: number, redis = server.url): ProcessRuntime {
  const runtime = startProcessRuntime({
    redis,
    prefix,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    aliveTtlMs,
  });
  started.push(runtime);
  return runtime;
}

/** Stops `runtime` as a process does at exit (its heartbeat first, which forgets its life). */
async function stopRuntime(runtime: ProcessRuntime): Promise<void> {
  await runtime.alive.stop();
  runtime.watch.stop();
  runtime.subscriber.disconnect();
  runtime.command.disconnect();
}

describe("a process's first heartbeat", () => {
  it("is in Redis before the process's first command is answered", async () => {
    const runtime = startRuntime(`${server.prefix}-first-beat`, 1500);
    // Any command the process sends (BullMQ taking a job and its lock, a lease) comes after.
    await runtime.command.ping();
    const aliveUntil = await runtime.command.zscore(runtime.keys.alive, runtime.lifeId);
    expect(aliveUntil).not.toBeNull();
    const [seconds] = await runtime.command.time();
    expect(Number(aliveUntil)).toBeGreaterThan(Number(seconds) * 1000);
  });

  it("is not sent with the heartbeat off (YIEM_ALIVE_TTL_MS=0)", async () => {
    const runtime = startRuntime(`${server.prefix}-no-beat`, 0);
    await runtime.command.ping();
    expect(await runtime.command.zscore(runtime.keys.alive, runtime.lifeId)).toBeNull();
  });

  it("keeps the life alive from the main thread while the heartbeat thread is not beating yet", async () => {
    // The command and subscriber connections go through; the thread's (the third) waits.
    const proxy = await startHoldingProxy(server.url, (n) => n > 2);
    try {
      const runtime = startRuntime(`${server.prefix}-slow-thread`, 1500, proxy.url);
      await runtime.command.ping();
      // Twice the ttl with the thread's connection held: only the main thread can beat.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const [seconds] = await runtime.command.time();
      const aliveUntil = await runtime.command.zscore(runtime.keys.alive, runtime.lifeId);
      expect(Number(aliveUntil)).toBeGreaterThan(Number(seconds) * 1000);
      proxy.open();
      await runtime.alive.stop();
      expect(await runtime.command.zscore(runtime.keys.alive, runtime.lifeId)).toBeNull();
      await stopRuntime(started.splice(started.indexOf(runtime), 1)[0] as ProcessRuntime);
    } finally {
      await proxy.close();
    }
  });
});
