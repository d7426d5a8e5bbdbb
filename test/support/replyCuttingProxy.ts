import { connect as connectTcp, createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll } from "vitest";
import type { TestCluster } from "./cluster.js";

/** A running `startReplyCuttingProxy`. */
export interface ReplyCuttingProxy {
  /** The proxy as a Redis URL. */
  url: string;
  /** Arms the next cut: at the `nth` command (from 1) whose bytes contain one of `markers`. */
  cutAt(markers: string | string[], nth: number): void;
  /** How many connections it cut so far. */
  cuts(): number;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback to the Redis at `redisUrl` that loses replies on demand: once armed
 * (`cutAt`), the nth command whose bytes contain a marker goes through to Redis, which runs
 * it, and then its connection is cut before Redis's reply comes back — as a Redis killed
 * between writing a script's effects to its AOF and sending the reply leaves it. The client
 * (ioredis) reconnects and sends the unanswered commands again. Commands written together
 * (a pipeline) count as one. Every other command passes untouched.
 *
 * @example
 * const proxy = await startReplyCuttingProxy(redis.url);
 * proxy.cutAt(`{${sessionId}}:runInputs`, 1); // the first command naming that key
 */
export async function startReplyCuttingProxy(redisUrl: string): Promise<ReplyCuttingProxy> {
  const sockets: Socket[] = [];
  let cuts = 0;
  let armed: { markers: string[]; left: number } | undefined;
  /** Whether `chunk` is the armed command: counts it down, disarms at the cut. */
  const isCutHere = (chunk: Buffer): boolean => {
    if (!armed?.markers.some((marker) => chunk.includes(marker))) return false;
    if (--armed.left > 0) return false;
    armed = undefined;
    return true;
  };
  const proxy: Server = createServer((client) => {
    const upstream = connectTcp(Number(new URL(redisUrl).port), "127.0.0.1");
    sockets.push(client, upstream);
    for (const socket of [client, upstream]) socket.on("error", () => socket.destroy());
    let cutting = false;
    upstream.on("data", (chunk: Buffer) => {
      if (!cutting) client.write(chunk);
    });
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      if (!isCutHere(chunk)) return;
      cuts++;
      cutting = true;
      // Long enough for Redis to run the command; its reply is dropped, then the connection.
      void sleep(200).then(() => {
        client.destroy();
        upstream.destroy();
      });
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    cutAt(markers, nth) {
      armed = { markers: typeof markers === "string" ? [markers] : markers, left: nth };
    },
    cuts: () => cuts,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** The production lock and stalled check: what a job left active by a lost take waited for. */
export const PRODUCTION_JOB_TIMERS = { YIEM_LOCK_MS: "30000", YIEM_STALLED_INTERVAL_MS: "30000" };

/** Which processes `useReplyCuttingProxy` adds behind the proxy, each with its extra environment. */
export interface ProxiedProcesses {
  coordinator?: Record<string, string>;
  worker?: Record<string, string>;
}

/**
 * Starts, before the file's tests (vitest hooks), a reply-cutting proxy to `cluster`'s Redis
 * and adds a coordinator and/or a worker that reach Redis through it; closes the proxy after
 * them. The returned object stands for the running proxy.
 *
 * @example const proxy = useReplyCuttingProxy(cluster, { worker: PRODUCTION_JOB_TIMERS });
 */
export function useReplyCuttingProxy(
  cluster: Pick<TestCluster, "redis" | "addCoordinatorWith" | "addWorkerWith">,
  processes: ProxiedProcesses,
): ReplyCuttingProxy {
  let current: ReplyCuttingProxy | undefined;
  beforeAll(async () => {
    current = await startReplyCuttingProxy(cluster.redis.url);
    const env = { REDIS_URL: current.url };
    if (processes.coordinator)
      await cluster.addCoordinatorWith({ ...processes.coordinator, ...env });
    if (processes.worker) await cluster.addWorkerWith({ ...processes.worker, ...env });
  }, 60_000);
  afterAll(async () => {
    await current?.close();
  });
  return new Proxy({} as ReplyCuttingProxy, {
    get(_target, property) {
      if (!current)
        throw new Error("the reply-cutting proxy is not started (used outside a test?)");
      return current[property as keyof ReplyCuttingProxy];
    },
  });
}
