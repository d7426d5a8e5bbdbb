import { createServer, type Server } from "node:net";
import { YiemClient } from "@yiem/core";
import {
  freePort,
  LOG_LEVELS,
  logEntries,
  logMessage,
  type ScriptedReply,
  type ScriptedRequest,
  type TestProcess,
} from "@yiem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { spawnApp } from "../support/processes.js";

/** The API key every process of the cluster gets (`useTestCluster`): it must never be logged. */
const API_KEY = "sk-test-canary-key";

/**
 * "tools": two sleepFor calls, then an answer; "unauthorized": a 401 whose message quotes the
 * key, as OpenAI's does; anything else: an answer.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: "done" };
  if (last?.content === "unauthorized") {
    return { kind: "httpError", status: 401, message: `Incorrect API key provided: ${API_KEY}` };
  }
  if (last?.content !== "tools") return { kind: "text", text: "hello" };
  return {
    kind: "toolCalls",
    calls: [
      { id: "t1", name: "sleepFor", arguments: { ms: 10, label: "a" } },
      { id: "t2", name: "sleepFor", arguments: { ms: 10, label: "b" } },
    ],
  };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });
const spawned: TestProcess[] = [];

afterAll(async () => {
  await Promise.all(spawned.map((p) => p.stop(3000)));
});

/** Starts an app with the cluster's environment, `env` on top (a prefix of its own by default). */
function spawn(entry: "coordinator" | "tool-worker", env: Record<string, string>): TestProcess {
  const process = spawnApp(`apps/${entry}/src/main.ts`, {
    ...cluster.env,
    YIEM_PREFIX: `${cluster.env.YIEM_PREFIX}-other`, // never takes the cluster's work
    ...env,
  });
  spawned.push(process);
  return process;
}

/** The tool names a process's ready line lists. */
function readyTools(process: TestProcess, message: string): unknown {
  return logEntries(process, message)[0]?.tools;
}

/** The tool names the coordinator offered the model in the request that carried `text`. */
function toolsOffered(text: string): string[] | undefined {
  const request = cluster.model.requests.find((r) =>
    JSON.stringify(r.body.messages).includes(text),
  );
  return request?.body.tools?.map((tool) => (tool as { function: { name: string } }).function.name);
}

/** `url` fetched once something listens there (refused connections retried for up to 10 s). */
async function fetchOnceListening(url: string): Promise<Response> {
  for (let tries = 0; ; tries++) {
    try {
      return await fetch(url);
    } catch (err) {
      if (tries >= 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A TCP server holding a loopback port, so that a process started on it finds it in use. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { port: (server.address() as { port: number }).port, server };
}

describe("the coordinator's log tells what happened to each run", () => {
  it("writes one info line per finished run with its session, run, turns, tool calls, duration and stop reason", async () => {
    const { sessionId, runId } = await cluster.client.send("tools");
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const coordinator = cluster.coordinators[0]!;
    await coordinator.waitForLine(
      (line) => line.includes(`"runId":"${runId}"`) && line.includes('"msg":"run finished"'),
    );
    const lines = logEntries(coordinator, "run finished").filter((e) => e.runId === runId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: LOG_LEVELS.info,
      sessionId,
      runId,
      turns: 2,
      toolCalls: 2,
      stopReason: "stop",
    });
    expect(lines[0]?.durationMs).toEqual(expect.any(Number));
  });

  it("warns when the model refuses a call (401), with the status and the run, never the key", async () => {
    const { sessionId, runId } = await cluster.client.send("unauthorized");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("error");
    const coordinator = cluster.coordinators[0]!;
    await coordinator.waitForLine(logMessage("model call failed"));
    const [failure] = logEntries(coordinator, "model call failed").filter((e) => e.runId === runId);
    expect(failure).toMatchObject({ level: LOG_LEVELS.warn, sessionId, runId, status: 401 });
    expect(failure?.reason).toMatch(/^401 .*Incorrect API key provided: \[redacted\]/);
    expect(coordinator.lines.join("\n")).not.toContain(API_KEY);
  });
});

describe("a process says what is wrong at start", () => {
  it("warns when OPENAI_API_KEY is unset, saying it may be fine for a local server", async () => {
    const local = spawn("coordinator", { OPENAI_API_KEY: "", PORT: String(await freePort()) });
    const openai = spawn("coordinator", {
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "",
      PORT: String(await freePort()),
    });
    for (const coordinator of [local, openai]) {
      await coordinator.waitForLine(logMessage("coordinator ready"));
    }
    const warning = (p: TestProcess) =>
      p.lines
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((entry) => entry.msg.startsWith("OPENAI_API_KEY is not set"));
    expect(warning(local)?.level).toBe(LOG_LEVELS.warn);
    expect(warning(local)?.msg).toContain("fine for a local server");
    expect(warning(openai)?.level).toBe(LOG_LEVELS.warn);
    expect(warning(openai)?.msg).toContain("calls to the OpenAI API will fail");
    // A coordinator with a key says nothing of the kind.
    expect(cluster.coordinators[0]!.lines.join("\n")).not.toContain("OPENAI_API_KEY is not set");
  });

  it("exits 1 with `port N is in use (PORT)` when its port is taken, before it starts anything", async () => {
    const { port, server } = await holdPort();
    try {
      const coordinator = spawn("coordinator", { PORT: String(port) });
      const worker = spawn("tool-worker", { WORKER_PORT: String(port), YIEM_WORKER_ID: "w-port" });
      expect(await coordinator.exited).toBe(1);
      expect(await worker.exited).toBe(1);
      expect(coordinator.lines).toContain(
        `coordinator failed to start: port ${port} is in use (PORT)`,
      );
      expect(worker.lines).toContain(
        `tool worker failed to start: port ${port} is in use (WORKER_PORT)`,
      );
      expect(coordinator.lines.some(logMessage("coordinator started"))).toBe(false);
      expect(worker.lines.some(logMessage("tool worker started"))).toBe(false);
    } finally {
      server.close();
    }
  });

  it("exits 1 with `port N is in use (PORT)` at once while Redis cannot be reached either", async () => {
    const { port, server } = await holdPort();
    try {
      const nowhere = `redis://127.0.0.1:${await freePort()}`;
      const coordinator = spawn("coordinator", { PORT: String(port), REDIS_URL: nowhere });
      expect(await coordinator.exited).toBe(1);
      expect(coordinator.lines).toContain(
        `coordinator failed to start: port ${port} is in use (PORT)`,
      );
    } finally {
      server.close();
    }
  });

  it("warns when Redis cannot be reached (password masked), and the coordinator is live but not ready", async () => {
    const nowhere = `redis://:canary-redis-pass@127.0.0.1:${await freePort()}`;
    const port = await freePort();
    const coordinator = spawn("coordinator", { REDIS_URL: nowhere, PORT: String(port) });
    const worker = spawn("tool-worker", { REDIS_URL: nowhere, YIEM_WORKER_ID: "w-nowhere" });
    for (const process of [coordinator, worker]) {
      await process.waitForLine(logMessage("redis unreachable at start; retrying"));
      const [warning] = logEntries(process, "redis unreachable at start; retrying");
      expect(warning?.level).toBe(LOG_LEVELS.warn);
      expect(warning?.err).toMatch(/ECONNREFUSED/);
      expect(warning?.redis).toMatch(/^redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/);
    }
    // The HTTP side starts beside the Redis connection: it may listen a moment after the warning.
    const healthz = await fetchOnceListening(`http://127.0.0.1:${port}/healthz`);
    expect(healthz.status).toBe(200);
    const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.text()).toBe("starting: connecting to redis\n");
    await new Promise((resolve) => setTimeout(resolve, 1000)); // more reconnect attempts fail
    for (const process of [coordinator, worker]) {
      expect(logEntries(process, "redis unreachable at start; retrying")).toHaveLength(1);
      expect(process.lines.join("\n")).not.toContain("canary-redis-pass");
    }
  });
});

describe("the built-in tools a process offers (YIEM_BUILTIN_TOOLS)", () => {
  it("offers getTime and getWeather but not httpFetch by default, on the coordinator and the worker", async () => {
    const { runId } = await cluster.client.send("which tools by default?");
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const offered = toolsOffered("which tools by default?");
    expect(offered).toEqual(expect.arrayContaining(["getTime", "getWeather", "listTools"]));
    expect(offered).not.toContain("httpFetch");
    const workerTools = readyTools(cluster.workers[0]!, "tool worker ready");
    expect(workerTools).toEqual(expect.arrayContaining(["getTime", "getWeather"]));
    expect(workerTools).not.toContain("httpFetch");
  });

  it("offers exactly the named built-ins with YIEM_BUILTIN_TOOLS=getTime,httpFetch", async () => {
    const prefix = `${cluster.env.YIEM_PREFIX}-builtins`;
    const env = {
      YIEM_PREFIX: prefix,
      YIEM_BUILTIN_TOOLS: "getTime,httpFetch",
      YIEM_HTTP_FETCH_ALLOW: "127.0.0.2/32",
    };
    const coordinator = spawn("coordinator", { ...env, PORT: String(await freePort()) });
    const worker = spawn("tool-worker", { ...env, YIEM_WORKER_ID: "w-builtins" });
    await coordinator.waitForLine(logMessage("coordinator ready"));
    await worker.waitForLine(logMessage("tool worker ready"));
    for (const tools of [
      readyTools(coordinator, "coordinator ready"),
      readyTools(worker, "tool worker ready"),
    ]) {
      expect(tools).toEqual(expect.arrayContaining(["getTime", "httpFetch"]));
      expect(tools).not.toContain("getWeather");
    }
    const client = new YiemClient({ redis: cluster.redisTarget, prefix });
    try {
      const { runId } = await client.send("which tools when named?");
      await client.waitForResponse(runId, { timeoutMs: 20_000 });
    } finally {
      await client.close();
    }
    const offered = toolsOffered("which tools when named?");
    expect(offered).toEqual(expect.arrayContaining(["getTime", "httpFetch", "listTools"]));
    expect(offered).not.toContain("getWeather");
  });

  it("refuses to start on an unknown built-in name or a bad YIEM_HTTP_FETCH_ALLOW entry", async () => {
    const coordinator = spawn("coordinator", {
      YIEM_BUILTIN_TOOLS: "getTime,fetchEverything",
      PORT: String(await freePort()),
    });
    const worker = spawn("tool-worker", { YIEM_HTTP_FETCH_ALLOW: "10.0.0.0/99" });
    expect(await coordinator.exited).toBe(1);
    expect(await worker.exited).toBe(1);
    expect(coordinator.lines.join("\n")).toContain(
      'coordinator failed to start: unknown built-in tool "fetchEverything" in YIEM_BUILTIN_TOOLS (use none, or a comma list of getTime, getWeather, httpFetch)',
    );
    expect(worker.lines.join("\n")).toContain(
      'tool worker failed to start: YIEM_HTTP_FETCH_ALLOW: "10.0.0.0/99" is not a valid CIDR range',
    );
  });
});
