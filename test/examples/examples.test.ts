/**
 * The examples run as their READMEs say, each as a process of its own, against the repo's
 * scripted OpenAI-compatible model and a private Redis:
 * - `examples/in-process-agent/main.ts`: a YiemAgent with one tool;
 * - `examples/cluster-plain-bullmq/cluster.ts` with `YIEM_TOOLS_DIR` naming
 *   `examples/tool-file/tools`, and `client.mjs` (plain BullMQ) asking it two questions, one
 *   answered through the example tool file on the worker, one through a built-in tool.
 */

import {
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
  uniquePrefix,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCommand } from "../support/processes.js";

type Wire = { role: string; content?: unknown };
type WireTool = { function?: { name?: string } };

/** The tool call a question asks for, among the tools offered; none when no tool fits. */
function callFor(question: string, offered: Set<string>): ScriptedReply | undefined {
  const celsius = /(-?\d+(?:\.\d+)?) ?°C/.exec(question);
  if (celsius && offered.has("celsiusToFahrenheit")) {
    const args = { celsius: Number(celsius[1]) };
    return { kind: "toolCalls", calls: [{ name: "celsiusToFahrenheit", arguments: args }] };
  }
  const quoted = /"([^"]+)"/.exec(question);
  if (quoted && offered.has("wordCount")) {
    return { kind: "toolCalls", calls: [{ name: "wordCount", arguments: { text: quoted[1] } }] };
  }
  const zone = /Tokyo/.test(question) ? "Asia/Tokyo" : undefined;
  if (zone && offered.has("getTime")) {
    return { kind: "toolCalls", calls: [{ name: "getTime", arguments: { timezone: zone } }] };
  }
  return undefined;
}

/** Calls the tool the question needs, then answers with the tool's result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const last = messages.at(-1);
  if (last?.role === "tool")
    return { kind: "text", text: `The tool says: ${String(last.content)}` };
  const offered = new Set(
    ((request.body.tools ?? []) as WireTool[]).map((tool) => tool.function?.name ?? ""),
  );
  return callFor(String(last?.content), offered) ?? { kind: "text", text: "No tool fits." };
}

let redis: TestRedis;
let model: ScriptedModelServer;
const processes: TestProcess[] = [];

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
  model = await startScriptedModelServer({ respond });
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop(3000)));
  await model?.close();
  await redis?.stop();
});

/** The model's settings, as a user exports them for a real one. */
function modelEnv(): Record<string, string> {
  return {
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test",
    YIEM_MODEL: "scripted-model",
  };
}

/** Starts `command` from the repository root (`node` is this Node) and remembers it. */
function start(command: string[], env: Record<string, string>): TestProcess {
  const started = spawnCommand(command, env);
  processes.push(started);
  return started;
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
    const agent = start(tsx("examples/in-process-agent/main.ts", "What is 21 °C in °F?"), {
      ...modelEnv(),
    });
    expect(await agent.exited).toBe(0);
    expect(agent.lines).toEqual([
      '→ celsiusToFahrenheit({"celsius":21})',
      "✔ celsiusToFahrenheit: 21 °C is 69.8 °F",
      "The tool says: 21 °C is 69.8 °F",
    ]);
  }, 60_000);
});

describe("examples/cluster-plain-bullmq with examples/tool-file", () => {
  it("answers a plain BullMQ client through the tool file on the worker, then closes", async () => {
    const env = { ...modelEnv(), REDIS_URL: redis.url, YIEM_PREFIX: uniquePrefix() };
    const cluster = start(tsx("examples/cluster-plain-bullmq/cluster.ts"), {
      ...env,
      YIEM_TOOLS_DIR: "examples/tool-file/tools",
    });
    const ready = await cluster.waitForLine((line) => line.startsWith("cluster ready"), 30_000);
    expect(ready).toContain("wordCount");

    const questions = ['How many words are in "the cat saw the hat"?', "What time is it in Tokyo?"];
    const client = start(["node", "examples/cluster-plain-bullmq/client.mjs", ...questions], env);
    expect(await client.exited).toBe(0);
    const [q1, a1, q2, a2, session] = client.lines;
    expect([q1, a1]).toEqual([`> ${questions[0]}`, 'The tool says: 5 words; most frequent: "the"']);
    expect(q2).toBe(`> ${questions[1]}`);
    expect(a2).toMatch(/^The tool says: Current time in Asia\/Tokyo: /);
    expect(session).toMatch(/^session [0-9a-f-]{36}$/);
    // The second question was asked in the first one's session.
    const last = model.requests.at(-1)?.body.messages as Wire[];
    expect(last.filter((m) => m.role === "user").map((m) => m.content)).toEqual(questions);

    cluster.signal("SIGTERM");
    expect(await cluster.exited).toBe(0);
    expect(cluster.lines.at(-1)).toBe("cluster closed");
  }, 90_000);
});
