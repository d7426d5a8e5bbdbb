/**
 * The processes as they are deployed: compiled JS started with the exact command of
 * docker-compose.yml (`node apps/…/dist/main.js`, the pid is node's own), so SIGTERM reaches
 * the process that drains. Needs `npm run build` (npm test runs it first).
 */
import { readFileSync } from "node:fs";
import { type BusEvent, YiemClient } from "@yiem/core";
import {
  freePort,
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot, spawnCommand } from "../support/processes.js";

const compose = parse(readFileSync(`${repoRoot}/docker-compose.yml`, "utf8")) as {
  services: Record<string, { command: string[] }>;
};
const commandOf = (service: string) => compose.services[service]?.command ?? [];

/** One `slowStep` call of 2 s (test/support/jsTools), then an answer quoting its result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `final: ${String(last.content)}` };
  return {
    kind: "toolCalls",
    calls: [{ id: "d1", name: "slowStep", arguments: { ms: 2000, label: "drain" } }],
  };
}

let redis: TestRedis;
let model: ScriptedModelServer;
const started: TestProcess[] = [];

async function environment(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: `${repoRoot}/test/support/jsTools`,
    PORT: String(await freePort()),
    YIEM_LEASE_MS: "3000",
    YIEM_LOCK_MS: "4000",
    YIEM_STALLED_INTERVAL_MS: "2000",
    ...extra,
  };
}

async function startAsDeployed(service: string, env: Record<string, string>): Promise<TestProcess> {
  const process = spawnCommand(commandOf(service), env);
  started.push(process);
  const ready = service === "coordinator" ? "coordinator ready" : "tool worker ready";
  await process.waitForLine((line) => line.includes(`"msg":"${ready}"`));
  return process;
}

/** Resolves with the exit code, or "still running" after `ms`. */
function exitWithin(process: TestProcess, ms: number): Promise<number | null | "still running"> {
  return Promise.race([
    process.exited,
    new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms)),
  ]);
}

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
  model = await startScriptedModelServer({ respond });
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop(500)));
  await model.close();
  await redis.stop();
});

describe("compiled processes started as docker-compose.yml starts them", () => {
  it("drains a worker's running call on SIGTERM to node's own pid, exits 0, and the run completes", async () => {
    const env = await environment();
    await startAsDeployed("coordinator", env);
    const worker = await startAsDeployed("tool-worker", env);
    expect(worker.lines.join("\n")).toContain('"slowStep"'); // the JS tool file loaded
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    try {
      const { sessionId, runId } = await client.send("go");
      const signal = AbortSignal.timeout(15_000);
      for await (const event of client.events(sessionId, {
        fromStart: true,
        signal,
      }) as AsyncIterable<BusEvent>) {
        if (event.type === "toolExecUpdate") break; // running on the worker now
      }
      worker.signal("SIGTERM");
      expect(await exitWithin(worker, 15_000)).toBe(0);
      const response = await client.waitForResponse(runId, { timeoutMs: 15_000 });
      expect(response.content).toEqual([
        { type: "text", text: `final: drain done by ${worker.pid}` },
      ]);
      expect(worker.lines.join("\n")).toContain("stopped cleanly");
    } finally {
      await client.close();
    }
  });

  it("exits within its grace period on SIGTERM while Redis is unreachable (coordinator and worker)", async () => {
    const env = await environment({ YIEM_SHUTDOWN_GRACE_MS: "2000", YIEM_WORKER_DRAIN_MS: "2000" });
    const coordinator = await startAsDeployed("coordinator", env);
    const worker = await startAsDeployed("tool-worker", env);
    await redis.kill("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 500));
    coordinator.signal("SIGTERM");
    worker.signal("SIGTERM");
    // Grace and drain 2 s; the coordinator may take 5 s more to close. Never "still running".
    const [coordinatorExit, workerExit] = await Promise.all([
      exitWithin(coordinator, 12_000),
      exitWithin(worker, 12_000),
    ]);
    expect(coordinatorExit).not.toBe("still running");
    expect(workerExit).not.toBe("still running");
  });
});
