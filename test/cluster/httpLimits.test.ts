/**
 * Slow clients against the HTTP sides (the coordinator's Bull Board, /healthz, /readyz,
 * /metrics; a worker's /healthz, /metrics): each process runs under a 512 open-file limit, and
 * 600 clients connect, send half a request and stall. A liveness probe still gets its answer
 * within its timeout, the server holds no more connections than its cap, and the stalled
 * clients are closed by the header timeout.
 */
import { connect, type Socket } from "node:net";
import {
  freePort,
  logMessage,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appCommand, spawnCommand } from "../support/processes.js";

/** The open-file limit each process runs under (the defect was seen at 1024 with 1,100 clients). */
const FD_LIMIT = 512;
/** Stalled clients: more than the process has file descriptors. */
const STALLED = 600;
/** The connection cap the processes get (`YIEM_HTTP_MAX_CONNECTIONS`), well under the limit. */
const MAX_CONNECTIONS = 200;
/** A liveness probe's timeout (Kubernetes' default is 1 s; compose's healthcheck has more). */
const PROBE_TIMEOUT_MS = 2000;

/** A client that sent part of a request's headers and stalls; what the server did with it. */
interface StalledClient {
  socket: Socket;
  /** Everything the server sent. */
  received: string;
  /** Resolves when the server closed the connection (the client never closes it itself). */
  closed: Promise<void>;
  isClosed: boolean;
}

/** Opens a connection to `port` on loopback and sends a request line and one header, no end. */
function stallOn(port: number): Promise<StalledClient> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const client = { socket, received: "", isClosed: false } as StalledClient;
    client.closed = new Promise((done) =>
      socket.once("close", () => {
        client.isClosed = true;
        done();
      }),
    );
    socket.on("data", (chunk) => {
      client.received += chunk.toString("latin1");
    });
    socket.on("error", () => undefined); // a reset connection is a closed one
    socket.once("connect", () => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      resolve(client);
    });
    socket.once("error", reject);
  });
}

/** Runs an app entry point under `FD_LIMIT` open files (a shell's `ulimit`, then exec). */
function spawnLimited(entry: string, env: Record<string, string>): TestProcess {
  const script = `ulimit -n ${FD_LIMIT} && exec "$0" "$@"`;
  return spawnCommand(["sh", "-c", script, ...appCommand(entry)], env);
}

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** The environment both processes share. */
function baseEnv(): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1", // never called: no request is sent
    OPENAI_API_KEY: "sk-test",
    YIEM_HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    LOG_LEVEL: "info",
  };
}

const sides = [
  {
    name: "the coordinator's HTTP side",
    start: async (port: number) => {
      const child = spawnLimited("apps/coordinator/src/main.ts", {
        ...baseEnv(),
        PORT: String(port),
      });
      await child.waitForLine(logMessage("coordinator ready"), 30_000);
      return child;
    },
  },
  {
    name: "a tool worker's HTTP side",
    start: async (port: number) => {
      const child = spawnLimited("apps/tool-worker/src/main.ts", {
        ...baseEnv(),
        WORKER_PORT: String(port),
      });
      await child.waitForLine(logMessage("tool worker ready"), 30_000);
      return child;
    },
  },
];

describe.each(sides)("$name under slow clients", ({ start }) => {
  let child: TestProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    child = await start(port);
  }, 40_000);

  afterAll(async () => {
    await child?.stop(3000);
  });

  it("answers a liveness probe within its timeout while 600 clients stall, holds at most its cap, and closes the stalled ones at the header timeout", async () => {
    const stalled = await Promise.all(Array.from({ length: STALLED }, () => stallOn(port)));
    try {
      const probe = await fetch(`http://127.0.0.1:${port}/healthz`, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      expect(probe.status).toBe(200);
      expect(await probe.json()).toMatchObject({ status: "ok" });
      // Connections past the cap were closed as they came (the oldest stalled ones first).
      while (stalled.filter((c) => !c.isClosed).length > MAX_CONNECTIONS) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Closes the server sent as the cap was reached may not have reached their clients yet
      // (a loaded machine): let them land, well before the header timeout.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The rest are closed by the server once their headers are overdue, with a 408.
      const kept = stalled.filter((c) => !c.isClosed);
      expect(kept.length).toBeGreaterThan(0);
      await Promise.all(kept.map((c) => c.closed));
      for (const client of kept) expect(client.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(child.child.exitCode).toBeNull();
    } finally {
      for (const client of stalled) client.socket.destroy();
    }
  }, 40_000);
});
