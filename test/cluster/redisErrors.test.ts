/**
 * `classifyRedisError` fed the errors a real Redis and ioredis give (refused connection, closed
 * connection, a cluster node with no slots, `maxmemory` under `noeviction`, an ACL refusal, a
 * wrong type): each becomes a `RedisCommandError` saying how it failed, with the retry intent
 * callers read (`isTransient`) and the default retry of `retryTransient` following it.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  classifyRedisError,
  isTransient,
  RedisCommandError,
  type RedisFailure,
  RedisUnavailableError,
  YiemError,
} from "@yiem/core";
import { isPassingRedisError, isTransientRedisError } from "@yiem/core/internal";
import { freePort, loopbackServerArgs, startTestRedis, uniquePrefix } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";

/** What `promise` rejected with (fails the test when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

/** The classification of a real error, and how the retry helpers read it. */
function verdict(err: Error): {
  failure: RedisFailure | undefined;
  retry: string;
  transient: boolean;
  retriedByDefault: boolean;
  passing: boolean;
} {
  const typed = classifyRedisError(err);
  return {
    failure: typed instanceof RedisCommandError ? typed.failure : undefined,
    retry: typed.retry,
    transient: isTransient(typed),
    retriedByDefault: isTransientRedisError(err),
    passing: isPassingRedisError(err),
  };
}

/** A client that fails at once instead of reconnecting or queueing. */
function impatientClient(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
}

describe("classifyRedisError, fed real Redis errors", () => {
  it("a refused connection (ioredis' error event) is unreachable: transient, retried by default", async () => {
    const port = await freePort();
    const client = impatientClient(`redis://127.0.0.1:${port}`);
    const told = new Promise<Error>((resolve) => client.once("error", resolve));
    client.connect().catch(() => undefined);
    const err = await told;
    client.disconnect();
    expect((err as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    expect(verdict(err)).toEqual({
      failure: "unreachable",
      retry: "transient",
      transient: true,
      retriedByDefault: true,
      passing: true,
    });
    const typed = classifyRedisError(err);
    expect([typed.name, typed.message, typed.cause]).toEqual([
      "RedisCommandError",
      err.message,
      err,
    ]);
  });

  it("a command on a closed connection is unreachable", async () => {
    const server = await startTestRedis();
    const client = new Redis(server.url, { lazyConnect: true });
    await client.connect();
    client.disconnect();
    const err = await rejectionOf(client.get(`${server.prefix}:k`));
    await server.stop();
    expect(err.message).toBe("Connection is closed.");
    expect(verdict(err).failure).toBe("unreachable");
    expect(verdict(err).retriedByDefault).toBe(true);
  });

  it("a cluster node that serves no slot (CLUSTERDOWN) is a failover: transient", async () => {
    const [port, busPort] = [await freePort(), await freePort()];
    const dir = await mkdtemp(join(tmpdir(), "yiem-redis-errors-"));
    // The bus port is picked free too: the default (port + 10000) may be taken by then.
    const node = spawn(
      "redis-server",
      [
        ...loopbackServerArgs(port, dir),
        "--save",
        "",
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        String(busPort),
      ],
      { stdio: "ignore" },
    );
    const client = new Redis(`redis://127.0.0.1:${port}`, {
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50, // no growing back-off while the node starts
    });
    client.on("error", () => undefined);
    try {
      let err: Error | undefined;
      for (let tries = 0; tries < 200 && !err?.message.startsWith("CLUSTERDOWN"); tries++) {
        if (node.exitCode !== null) throw new Error(`redis-server exited (${node.exitCode})`);
        err = await rejectionOf(client.get("k"));
      }
      expect(err?.message).toMatch(/^CLUSTERDOWN/);
      expect(verdict(err as Error)).toEqual({
        failure: "failover",
        retry: "transient",
        transient: true,
        retriedByDefault: true,
        passing: true,
      });
    } finally {
      client.disconnect();
      node.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a write refused at maxmemory under noeviction is out-of-memory: transient, but not retried by default", async () => {
    const server = await startTestRedis({ privateServer: true });
    const client = new Redis(server.url);
    try {
      await client.config("SET", "maxmemory-policy", "noeviction");
      await client.config("SET", "maxmemory", "1");
      const err = await rejectionOf(client.set(`${server.prefix}:k`, "x"));
      expect(err.message).toMatch(/^OOM /);
      expect(verdict(err)).toEqual({
        failure: "out-of-memory",
        retry: "transient",
        transient: true,
        retriedByDefault: false,
        passing: true,
      });
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  it("a command the ACL user may not run is not-permitted: terminal", async () => {
    const server = await startTestRedis({
      privateServer: true,
      aclLines: ["user reader on >pw ~* -@all +get +ping +info"],
    });
    const client = new Redis(server.url.replace("redis://", "redis://reader:pw@"));
    try {
      const err = await rejectionOf(client.set(`${server.prefix}:k`, "x"));
      expect(err.message).toMatch(/^NOPERM /);
      expect(verdict(err)).toEqual({
        failure: "not-permitted",
        retry: "terminal",
        transient: false,
        retriedByDefault: false,
        passing: false,
      });
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  it("a command that is wrong in itself (WRONGTYPE) is a command failure: terminal", async () => {
    const server = await startTestRedis();
    const client = new Redis(server.url);
    const key = `${server.prefix}:${uniquePrefix()}`;
    try {
      await client.rpush(key, "a");
      const err = await rejectionOf(client.get(key));
      expect(err.message).toMatch(/^WRONGTYPE /);
      expect(verdict(err)).toEqual({
        failure: "command",
        retry: "terminal",
        transient: false,
        retriedByDefault: false,
        passing: false,
      });
    } finally {
      await client.del(key);
      client.disconnect();
      await server.stop();
    }
  });

  it("a Yiem error is returned as it is, and judged by its own intent", () => {
    const err = new RedisUnavailableError("127.0.0.1:6379", new Error("NOPERM no"));
    expect(classifyRedisError(err)).toBe(err);
    expect(err).toBeInstanceOf(YiemError);
    expect([err.retry, isTransientRedisError(err), isPassingRedisError(err)]).toEqual([
      "transient",
      true,
      true,
    ]);
  });
});
