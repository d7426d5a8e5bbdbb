/**
 * `httpSideMayStart` (`@yiem/core/internal`): when a coordinator's HTTP side may start. At once
 * when no run waited as the runtime began taking work; after the process's first run when runs
 * waited (at the latest `FIRST_RUN_WAIT_MS` later); `RUNTIME_WAIT_MS` after the call while the
 * runtime is not taking work (Redis away). The process's first piece of work is process-wide
 * state, so this file runs in a process of its own; its timers are faked.
 */
import {
  FIRST_RUN_WAIT_MS,
  httpSideMayStart,
  markProcessWarm,
  RUNTIME_WAIT_MS,
} from "@yiem/core/internal";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout"] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` settled by the time pending promise jobs and I/O callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("when the HTTP side may start", () => {
  it("starts at once when no run waited, without any timer running out", async () => {
    const may = httpSideMayStart(Promise.resolve({ runsWaitedAtStart: false }));
    expect(await settled(may)).toBe(true);
  });

  it("waits while the runtime is not taking work, until its bound", async () => {
    const may = httpSideMayStart(new Promise(() => undefined)); // Redis away: never taking work
    expect(await settled(may)).toBe(false);
    await vi.advanceTimersByTimeAsync(RUNTIME_WAIT_MS - 1);
    expect(await settled(may)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(may)).toBe(true);
  });

  it("waits for the first run when runs waited, at most its bound", async () => {
    const capped = httpSideMayStart(Promise.resolve({ runsWaitedAtStart: true }));
    expect(await settled(capped)).toBe(false);
    await vi.advanceTimersByTimeAsync(FIRST_RUN_WAIT_MS);
    expect(await settled(capped)).toBe(true);
    const warm = httpSideMayStart(Promise.resolve({ runsWaitedAtStart: true }));
    expect(await settled(warm)).toBe(false);
    markProcessWarm(); // the first run finished
    expect(await settled(warm)).toBe(true);
  });
});
