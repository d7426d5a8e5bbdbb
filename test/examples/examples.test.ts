/**
 * The examples run as their READMEs say, each as a process of its own, offline: against the
 * shipped `yiem-scripted-model` command (the bin `npx yiem-scripted-model` runs) with the
 * script file of the example's folder, and a private Redis:
 * - `examples/in-process-agent/main.ts` with `model.json`: a YiemAgent with one tool;
 * - `examples/cluster-plain-bullmq/cluster.ts` with `model.json` and `YIEM_TOOLS_DIR` naming
 *   `examples/tool-file/tools`, and `client.mjs` (plain BullMQ) asking it two questions, one
 *   answered through the example tool file on the worker, one through a built-in tool.
 */
import { YiemClient } from "@yiem/core";
import { startTestRedis, type TestProcess, type TestRedis, uniquePrefix } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCommand } from "../support/processes.js";

/** The bin `npx yiem-scripted-model` runs from the repository root. */
const SCRIPTED_MODEL_BIN = "node_modules/.bin/yiem-scripted-model";

let redis: TestRedis;
const processes: TestProcess[] = [];

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop(3000)));
  await redis?.stop();
});

/** Starts `command` from the repository root (`node` is this Node) and remembers it. */
function start(command: string[], env: Record<string, string>): TestProcess {
  const started = spawnCommand(command, env);
  processes.push(started);
  return started;
}

/**
 * `npx yiem-scripted-model --script <script> --port 0`, as the examples' READMEs start it
 * (on a free port here); resolves with the settings its start line says to export.
 */
async function startScriptedModel(script: string): Promise<Record<string, string>> {
  const model = start(["node", SCRIPTED_MODEL_BIN, "--script", script, "--port", "0"], {});
  const hint = await model.waitForLine((line) => line.trim().startsWith("OPENAI_BASE_URL="));
  const env = Object.fromEntries(
    hint
      .trim()
      .split(/\s+/)
      .map((setting) => [
        setting.slice(0, setting.indexOf("=")),
        setting.slice(setting.indexOf("=") + 1),
      ]),
  );
  expect(Object.keys(env)).toEqual(["OPENAI_BASE_URL", "OPENAI_API_KEY", "YIEM_MODEL"]);
  return env;
}

/** `npx tsx --conditions=yiem-source <file>`, as the examples' READMEs run TypeScript. */
const tsx = (file: string, ...args: string[]) => [
  "node",
  "--conditions=yiem-source",
  "--import",
  "tsx",
  file,
  ...args,
];

describe("examples/in-process-agent", () => {
  it("runs the agent's tool and prints each call and the answer", async () => {
    const modelEnv = await startScriptedModel("examples/in-process-agent/model.json");
    const agent = start(tsx("examples/in-process-agent/main.ts", "What is 21 °C in °F?"), modelEnv);
    expect(await agent.exited).toBe(0);
    expect(agent.lines).toEqual([
      '→ celsiusToFahrenheit({"celsius":21})',
      "✔ celsiusToFahrenheit: 21 °C is 69.8 °F",
      "21 °C is 69.8 °F.",
    ]);
  }, 60_000);
});

describe("examples/cluster-plain-bullmq with examples/tool-file", () => {
  it("answers a plain BullMQ client through the tool file on the worker, then closes", async () => {
    const modelEnv = await startScriptedModel("examples/cluster-plain-bullmq/model.json");
    const env = { ...modelEnv, REDIS_URL: redis.url, YIEM_PREFIX: uniquePrefix() };
    const cluster = start(tsx("examples/cluster-plain-bullmq/cluster.ts"), {
      ...env,
      YIEM_TOOLS_DIR: "examples/tool-file/tools",
    });
    const ready = await cluster.waitForLine((line) => line.startsWith("cluster ready"), 60_000);
    expect(ready).toContain("wordCount");

    const questions = ['How many words are in "the cat saw the hat"?', "What time is it in Tokyo?"];
    const client = start(["node", "examples/cluster-plain-bullmq/client.mjs", ...questions], env);
    expect(await client.exited).toBe(0);
    const [q1, a1, q2, a2, session] = client.lines;
    expect([q1, a1]).toEqual([`> ${questions[0]}`, '5 words; most frequent: "the".']);
    expect(q2).toBe(`> ${questions[1]}`);
    expect(a2).toMatch(/^Current time in Asia\/Tokyo: .+\.$/);
    expect(session).toMatch(/^session [0-9a-f-]{36}$/);
    // The second question was asked in the first one's session.
    const yiem = new YiemClient({ redis: redis.url, prefix: env.YIEM_PREFIX });
    const transcript = await yiem.messages(session?.slice("session ".length) ?? "");
    await yiem.close();
    const asked = transcript.filter((m) => m.role === "user").map((m) => m.content);
    expect(asked).toEqual(questions.map((text) => [{ type: "text", text }]));

    cluster.signal("SIGTERM");
    expect(await cluster.exited).toBe(0);
    expect(cluster.lines.at(-1)).toBe("cluster closed");
  }, 90_000);
});
