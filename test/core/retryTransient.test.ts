import { anyError, isTransientRedisError, retryTransient } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";

describe("retrying a Redis command through a failover", () => {
  it("tries again while the cluster fails over, then returns the answer", async () => {
    const errors = [
      new Error("Too many Cluster redirections. Last error: ReplyError: MOVED 3337 127.0.0.1:7001"),
      new Error("CLUSTERDOWN The cluster is down"),
    ];
    let calls = 0;
    const answer = await retryTransient(async () => {
      calls++;
      const error = errors.shift();
      if (error) throw error;
      return "OK";
    });
    expect([answer, calls]).toEqual(["OK", 3]);
  });

  it("gives up at once on an error that is not about reaching Redis", async () => {
    let calls = 0;
    const wrong = retryTransient(async () => {
      calls++;
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    });
    await expect(wrong).rejects.toThrow(/WRONGTYPE/);
    expect(calls).toBe(1);
    expect(isTransientRedisError(new Error("the task was MASKED"))).toBe(false);
  });

  it("gives up after its attempts, with the last error", async () => {
    let calls = 0;
    const never = retryTransient(
      async () => {
        calls++;
        throw new Error(`Connection is closed. (${calls})`);
      },
      { attempts: 3 },
    );
    await expect(never).rejects.toThrow("Connection is closed. (3)");
  });

  it("with retryIf anyError and no cap, tries every error again until it succeeds, telling onRetry", async () => {
    const told: number[] = [];
    const answer = await retryTransient(
      async (attempt) => {
        if (attempt < 3) throw new Error("OOM command not allowed when used memory > 'maxmemory'");
        return attempt;
      },
      {
        attempts: Number.POSITIVE_INFINITY,
        retryIf: anyError,
        backoffMs: () => 1,
        onRetry: (_err, attempt) => told.push(attempt),
      },
    );
    expect([answer, told]).toEqual([3, [0, 1, 2]]);
  });

  it("stops when its signal aborts, in the middle of a pause, with the signal's reason", async () => {
    const letGo = new AbortController();
    let calls = 0;
    const stopped = retryTransient(
      async () => {
        calls++;
        setTimeout(() => letGo.abort(new Error("the job was let go")), 10);
        throw new Error("Connection is closed.");
      },
      { attempts: Number.POSITIVE_INFINITY, backoffMs: () => 60_000, signal: letGo.signal },
    );
    await expect(stopped).rejects.toThrow("the job was let go");
    expect(calls).toBe(1);
  });
});
