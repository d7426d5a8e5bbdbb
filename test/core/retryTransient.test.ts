import { isTransientRedisError, retryTransient } from "@yiem/core/internal";
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
    const never = retryTransient(async () => {
      calls++;
      throw new Error(`Connection is closed. (${calls})`);
    }, 3);
    await expect(never).rejects.toThrow("Connection is closed. (3)");
  });
});
