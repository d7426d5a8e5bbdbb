import { connect } from "node:net";
import {
  freePort,
  logMessage,
  type ScriptedModelServer,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnApp } from "../support/processes.js";

const BOARD_USER = "board-admin";
// A colon is allowed in a basic-auth password (only the first one splits user and password).
const BOARD_PASSWORD = "board:canary-pass-4f2";
const HALF_SET = /YIEM_ADMIN_USER and YIEM_ADMIN_PASSWORD must be set together/;
/** A loopback address other than 127.0.0.1: reaches a wildcard bind, not a 127.0.0.1 one. */
const OTHER_LOOPBACK = "127.0.0.2";

let redis: TestRedis;
let model: ScriptedModelServer;
const started: TestProcess[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  model = await startScriptedModelServer({ replies: [] });
}, 30_000);

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop(3000)));
  await model?.close();
  await redis?.stop();
});

/** Spawns a coordinator process with `env` on top of a working configuration. */
async function spawnCoordinator(env: Record<string, string>) {
  const port = await freePort();
  const coordinator = spawnApp("apps/coordinator/src/main.ts", {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test-canary-key",
    YIEM_MODEL: "scripted-model",
    PORT: String(port),
    ...env,
  });
  started.push(coordinator);
  return { coordinator, port };
}

/** How a coordinator's start ended: `"ready"`, or its exit code when it exited first. */
function waitForStart(coordinator: TestProcess): Promise<"ready" | number | null> {
  const ready = coordinator
    .waitForLine(logMessage("coordinator ready"), 30_000)
    .then(() => "ready" as const);
  return Promise.race([ready, coordinator.exited]);
}

/** True when a TCP connection to `host:port` is accepted. */
function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function basicAuth(user: string, password: string): { authorization: string } {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/** The `host` field of the coordinator's "coordinator ready" log line. */
function readyHost(coordinator: TestProcess): unknown {
  const line = coordinator.lines.find(logMessage("coordinator ready")) ?? "{}";
  return (JSON.parse(line) as { host?: unknown }).host;
}

describe("Bull Board access", () => {
  it("refuses to start when only the admin password is set", async () => {
    const { coordinator } = await spawnCoordinator({ YIEM_ADMIN_PASSWORD: BOARD_PASSWORD });
    expect(await waitForStart(coordinator)).toBe(1);
    const output = coordinator.lines.join("\n");
    expect(output).toMatch(/coordinator failed to start: /);
    expect(output).toMatch(HALF_SET);
    expect(output).toContain("only YIEM_ADMIN_PASSWORD is set");
    expect(output).not.toContain(BOARD_PASSWORD);
  });

  it("refuses to start when only the admin user is set", async () => {
    const { coordinator } = await spawnCoordinator({ YIEM_ADMIN_USER: BOARD_USER });
    expect(await waitForStart(coordinator)).toBe(1);
    const output = coordinator.lines.join("\n");
    expect(output).toMatch(HALF_SET);
    expect(output).toContain("only YIEM_ADMIN_USER is set");
  });

  it("asks for both credentials on Bull Board when both are set, and listens on every interface", async () => {
    const { coordinator, port } = await spawnCoordinator({
      YIEM_ADMIN_USER: BOARD_USER,
      YIEM_ADMIN_PASSWORD: BOARD_PASSWORD,
    });
    expect(await waitForStart(coordinator)).toBe("ready");
    const board = `http://127.0.0.1:${port}/admin/queues`;
    expect((await fetch(board)).status).toBe(401);
    expect((await fetch(board, { headers: basicAuth(BOARD_USER, "wrong") })).status).toBe(401);
    expect((await fetch(board, { headers: basicAuth("wrong", BOARD_PASSWORD) })).status).toBe(401);
    expect((await fetch(board, { headers: basicAuth(BOARD_USER, BOARD_PASSWORD) })).status).toBe(
      200,
    );
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(readyHost(coordinator)).toBe("0.0.0.0");
    expect(await acceptsConnections(OTHER_LOOPBACK, port)).toBe(true);
  });

  it("listens on 127.0.0.1 only when no credentials are set", async () => {
    const { coordinator, port } = await spawnCoordinator({});
    expect(await waitForStart(coordinator)).toBe("ready");
    expect((await fetch(`http://127.0.0.1:${port}/admin/queues`)).status).toBe(200);
    expect(await acceptsConnections(OTHER_LOOPBACK, port)).toBe(false);
    expect(readyHost(coordinator)).toBe("127.0.0.1");
  });

  it("listens where YIEM_ADMIN_HOST says without credentials, and warns that the board is open", async () => {
    const { coordinator, port } = await spawnCoordinator({ YIEM_ADMIN_HOST: "0.0.0.0" });
    expect(await waitForStart(coordinator)).toBe("ready");
    expect(await acceptsConnections(OTHER_LOOPBACK, port)).toBe(true);
    expect(
      coordinator.lines.some(
        logMessage("Bull Board is writable by anyone who can reach this address"),
      ),
    ).toBe(true);
  });
});
