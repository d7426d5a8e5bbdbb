/**
 * The processes as they are deployed: compiled JS started with the exact command of
 * docker-compose.yml (`node apps/…/dist/main.bundle.js`, the pid is node's own), so SIGTERM reaches
 * the process that drains. Needs `npm run build` (npm test runs it first).
 */
import { readFileSync } from "node:fs";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BusEvent, YiemClient } from "@yiem/core";
import {
  freePort,
  logEntries,
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

/**
 * A tool folder outside the repo, as an operator has one: no package.json (so the TypeScript
 * file compiles to CommonJS), a `.ts` and a `.cjs` tool that import `@yiem/core` from where no
 * node_modules has it, and a copy of `slowStep`. `stamp` may run in parallel (alone: on a
 * worker), `tally` may not (any batch with it runs in the coordinator); both throw, with an
 * `apiKey` field, when asked to fail.
 */
const OUTSIDE_TOOLS: Record<string, string> = {
  "stamp.ts": `import { DEFAULTS, type AgentTool } from "@yiem/core";
export default function stamp(): AgentTool {
  return {
    name: "stamp", label: "Stamp", description: "d", inputSchema: { type: "object" },
    parallelToolExecute: true,
    execute: (_id, args) => {
      if (args.fail) throw Object.assign(new Error("stamp failed on purpose"), { apiKey: "sk-live-secret" });
      const prefixLength: number = DEFAULTS.prefix.length;
      return { content: [{ type: "text", text: \`stamp:\${prefixLength}:\${process.pid}\` }], details: {} };
    },
  };
}
`,
  "tally.cjs": `const { ToolStore } = require("@yiem/core");
exports.getTool = () => ({
  name: "tally", label: "Tally", description: "d", inputSchema: { type: "object" },
  execute: (_id, args) => {
    if (args.fail) throw Object.assign(new Error("tally failed on purpose"), { apiKey: "sk-live-secret" });
    return { content: [{ type: "text", text: \`tally:\${new ToolStore({ name: "t" }).name}:\${process.pid}\` }], details: {} };
  },
});
`,
};

/** A TypeScript tool only the workers load: not parallel, so only its being worker-only sends it there. */
const WORKER_ONLY_TOOL = `import { defineTool } from "@yiem/core";
export default defineTool({
  name: "onlyOnWorkers", description: "d", parameters: { type: "object", properties: {} },
  execute: () => \`onlyOnWorkers:\${process.pid}\`,
});
`;

type Message = { role: string; content: unknown };

/** `use the tool files`: stamp + tally, then a failing stamp, then a failing tally, then an answer quoting every result. */
function respondWithToolFiles(messages: Message[]): ScriptedReply {
  const results = messages.filter((message) => message.role === "tool").map((m) => m.content);
  const turns: ScriptedReply[] = [
    {
      kind: "toolCalls",
      calls: [
        { id: "a1", name: "stamp", arguments: {} },
        { id: "a2", name: "tally", arguments: {} },
      ],
    },
    { kind: "toolCalls", calls: [{ id: "b1", name: "stamp", arguments: { fail: true } }] },
  ];
  if (results.length === 2) return turns[1] as ScriptedReply;
  if (results.length === 3) {
    return { kind: "toolCalls", calls: [{ id: "c1", name: "tally", arguments: { fail: true } }] };
  }
  if (results.length === 4) return { kind: "text", text: results.map(String).join(" | ") };
  return turns[0] as ScriptedReply;
}

/** One `slowStep` call of 2 s (test/support/jsTools), then an answer quoting its result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Message[];
  const input = messages.find((message) => message.role === "user")?.content;
  if (String(input).includes("use the tool files")) return respondWithToolFiles(messages);
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `final: ${String(last.content)}` };
  if (String(input).includes("worker-only")) {
    return { kind: "toolCalls", calls: [{ id: "w1", name: "onlyOnWorkers", arguments: {} }] };
  }
  return {
    kind: "toolCalls",
    calls: [{ id: "d1", name: "slowStep", arguments: { ms: 2000, label: "drain" } }],
  };
}

let redis: TestRedis;
let model: ScriptedModelServer;
let toolsDir: string;
const started: TestProcess[] = [];

async function environment(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: toolsDir,
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

let deployed: Promise<{ coordinator: TestProcess; worker: TestProcess }> | undefined;

/** One coordinator and one worker as deployed, shared by the tests that can share them. */
function startDeployedPair(): Promise<{ coordinator: TestProcess; worker: TestProcess }> {
  deployed ??= (async () => {
    const env = await environment();
    const coordinator = await startAsDeployed("coordinator", env);
    return { coordinator, worker: await startAsDeployed("tool-worker", env) };
  })();
  return deployed;
}

beforeAll(async () => {
  toolsDir = await mkdtemp(join(tmpdir(), "yiem-outside-tools-"));
  await copyFile(`${repoRoot}/test/support/jsTools/slowStep.mjs`, join(toolsDir, "slowStep.mjs"));
  for (const [file, text] of Object.entries(OUTSIDE_TOOLS)) {
    await writeFile(join(toolsDir, file), text);
  }
  redis = await startTestRedis({ privateServer: true });
  model = await startScriptedModelServer({ respond });
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop(500)));
  await model.close();
  await redis.stop();
  await rm(toolsDir, { recursive: true, force: true });
});

describe("compiled processes started as docker-compose.yml starts them", () => {
  it("loads a .ts and a .cjs tool file from a folder outside the repo, runs both, and logs a tool's throw where it ran", async () => {
    const { coordinator, worker } = await startDeployedPair();
    for (const [process, ready] of [
      [coordinator, "coordinator ready"],
      [worker, "tool worker ready"],
    ] as const) {
      expect(logEntries(process, ready)[0]?.tools).toEqual(
        expect.arrayContaining(["stamp", "tally"]),
      );
    }
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    try {
      const { runId } = await client.send("use the tool files");
      const response = await client.waitForResponse(runId, { timeoutMs: 15_000 });
      const prefixLength = "yiem".length; // DEFAULTS.prefix, read from the process's own @yiem/core
      expect(response.content).toEqual([
        {
          type: "text",
          text: [
            `stamp:${prefixLength}:${coordinator.pid}`, // with tally: a sequential batch, in process
            `tally:t:${coordinator.pid}`,
            "stamp failed on purpose",
            "tally failed on purpose",
          ].join(" | "),
        },
      ]);
    } finally {
      await client.close();
    }
    // The answer may come before the processes' log lines are read from their pipes.
    const threw = (line: string) => line.includes('"msg":"tool threw"');
    await Promise.all([worker.waitForLine(threw, 10_000), coordinator.waitForLine(threw, 10_000)]);
    const [onWorker] = logEntries(worker, "tool threw");
    expect(onWorker).toMatchObject({
      level: 40,
      tool: "stamp",
      toolCallId: "b1",
      sessionId: expect.any(String),
      err: { message: "stamp failed on purpose", apiKey: "[redacted]" },
    });
    expect(String((onWorker?.err as { stack?: string } | undefined)?.stack)).toContain("stamp.ts");
    const [onCoordinator] = logEntries(coordinator, "tool threw");
    expect(onCoordinator).toMatchObject({
      tool: "tally",
      toolCallId: "c1",
      sessionId: onWorker?.sessionId,
      err: { message: "tally failed on purpose", apiKey: "[redacted]" },
    });
    expect([...worker.lines, ...coordinator.lines].join("\n")).not.toContain("sk-live-secret");
  });

  it("stops a worker at start under YIEM_TOOLS_STRICT=1 when a tool file fails, naming file, line and column", async () => {
    const strictDir = await mkdtemp(join(tmpdir(), "yiem-strict-tools-"));
    try {
      await writeFile(join(strictDir, "broken.ts"), "export function getTool(: number {\n");
      const worker = spawnCommand(commandOf("tool-worker"), {
        ...(await environment()),
        YIEM_TOOLS_DIR: strictDir,
        YIEM_TOOLS_STRICT: "1",
      });
      started.push(worker);
      expect(await exitWithin(worker, 15_000)).toBe(1);
      expect(worker.lines.join("\n")).toContain(
        `tool worker failed to start: YIEM_TOOLS_STRICT=1 and 1 tool file(s) failed to load:\n  ${join(strictDir, "broken.ts")}: failed to load ${join(strictDir, "broken.ts")}:1:25: syntax error`,
      );
    } finally {
      await rm(strictDir, { recursive: true, force: true });
    }
  });

  it("answers with a .ts tool only the workers have, the coordinator started with no tool files", async () => {
    const workerOnlyDir = await mkdtemp(join(tmpdir(), "yiem-worker-only-tools-"));
    await writeFile(join(workerOnlyDir, "onlyOnWorkers.ts"), WORKER_ONLY_TOOL);
    const prefix = `${redis.prefix}-workeronly`;
    const worker = await startAsDeployed(
      "tool-worker",
      await environment({ YIEM_PREFIX: prefix, YIEM_TOOLS_DIR: workerOnlyDir }),
    );
    const coordinator = await startAsDeployed(
      "coordinator",
      await environment({ YIEM_PREFIX: prefix, YIEM_TOOLS_DIR: "" }),
    );
    expect(coordinator.lines.join("\n")).not.toContain("onlyOnWorkers.ts"); // loaded no tool file
    const client = new YiemClient({ redis: redis.url, prefix });
    try {
      const { runId } = await client.send("use the worker-only tool");
      const response = await client.waitForResponse(runId, { timeoutMs: 15_000 });
      expect(response.content).toEqual([
        { type: "text", text: `final: onlyOnWorkers:${worker.pid}` },
      ]);
      const offered = model.requests.at(-1)?.body.tools as Array<{ function: { name: string } }>;
      expect(offered.map((tool) => tool.function.name)).toContain("onlyOnWorkers");
    } finally {
      await client.close();
      await rm(workerOnlyDir, { recursive: true, force: true });
    }
  });

  it("drains a worker's running call on SIGTERM to node's own pid, exits 0, and the run completes", async () => {
    const { worker } = await startDeployedPair();
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
