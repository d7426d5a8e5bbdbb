/**
 * `yiem-scripted-model` as a user runs it: the package's bin started as a real process with a
 * script file, spoken to over HTTP with the openai SDK, streamed and not. Needs
 * `npm run build` (npm test runs it first): the bin runs the compiled command.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAILlmCall, YiemAgent } from "@yiem/core";
import type { TestProcess } from "@yiem/testing";
import { getBuiltinTools } from "@yiem/tools";
import OpenAI, { BadRequestError } from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, spawnCommand } from "../support/processes.js";

const BIN = "packages/testing/bin/yiem-scripted-model.js";
const EXAMPLE_SCRIPT = join(repoRoot, "packages/testing/examples/time.json");

/** A script with a regex rule, a rule of parallel calls, a one-step rule and a default. */
const script = {
  model: "tiny-scripted",
  rules: [
    {
      name: "weather",
      match: { regex: "weather in (?<city>[A-Za-z]+)", flags: "i" },
      steps: [
        { toolCalls: [{ name: "getWeather", arguments: { city: "{{match.city}}", days: 1 } }] },
        { text: "In {{match.city}}: {{result.getWeather}}" },
      ],
    },
    {
      name: "two cities",
      match: { contains: "PARIS AND TOKYO" },
      steps: [
        {
          toolCalls: [
            { name: "getWeather", arguments: { city: "Paris" } },
            { name: "getWeather", arguments: { city: "Tokyo" } },
          ],
          text: "Looking up both.",
        },
        { text: "Both:\n{{results.getWeather}}\nLast: {{result}}" },
      ],
    },
    {
      name: "calls only",
      match: { contains: "just call" },
      steps: [{ toolCalls: [{ name: "ping" }] }],
    },
  ],
  default: { steps: [{ text: "Ask about the weather. You said: {{input}}" }] },
};

const started: TestProcess[] = [];
let folder: string;

/** Writes `content` (JSON unless a string) as a script file and returns its path. */
async function scriptFile(name: string, content: unknown): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** Starts the bin with `args`, as `npx yiem-scripted-model` would. */
function startCommand(args: string[]): TestProcess {
  const process = spawnCommand(["node", BIN, ...args], {});
  started.push(process);
  return process;
}

/** Starts the bin on a free port with the script at `path`; resolves with its base URL. */
async function serve(path: string): Promise<{ process: TestProcess; baseURL: string }> {
  const process = startCommand(["--port", "0", "--script", path]);
  const line = await process.waitForLine((l) => /serving .* at http:\/\/\S+\/v1$/.test(l));
  return { process, baseURL: line.slice(line.lastIndexOf(" ") + 1) };
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "yiem-scripted-model-"));
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop(2_000)));
  await rm(folder, { recursive: true, force: true });
});

describe("yiem-scripted-model", () => {
  let client: OpenAI;
  let baseURL: string;

  beforeAll(async () => {
    ({ baseURL } = await serve(await scriptFile("script.json", script)));
    client = new OpenAI({ baseURL, apiKey: "any", maxRetries: 0 });
  });

  const weatherQuestion: ChatCompletionMessageParam = {
    role: "user",
    content: "What is the weather in Lisbon?",
  };

  /** The conversation after the model called getWeather (id `c1`) and the tool answered. */
  const afterWeatherCall: ChatCompletionMessageParam[] = [
    weatherQuestion,
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "c1", type: "function", function: { name: "getWeather", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "sunny, 24°C" },
  ];

  it("prints its URL, answers as the script's model and lists it on /v1/models", async () => {
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["tiny-scripted"]);
  });

  it("answers the first step of the matching rule with its tool calls, regex groups filled", async () => {
    const completion = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: [weatherQuestion],
    });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const calls = (choice?.message.tool_calls ?? []).map((call) =>
      call.type === "function" ? [call.function.name, JSON.parse(call.function.arguments)] : [],
    );
    expect(calls).toEqual([["getWeather", { city: "Lisbon", days: 1 }]]);
  });

  it("answers the next step with text quoting the tool result, once the result is in", async () => {
    const completion = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: afterWeatherCall,
    });
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.choices[0]?.message.content).toBe("In Lisbon: sunny, 24°C");
  });

  it("streams the tool calls and the text of the same steps", async () => {
    const callStream = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: [{ role: "user", content: "Paris and Tokyo: what is it like there?" }],
      stream: true,
    });
    const calls = new Map<number, { name: string; arguments: string }>();
    let text = "";
    for await (const chunk of callStream) {
      const delta = chunk.choices[0]?.delta;
      text += delta?.content ?? "";
      for (const call of delta?.tool_calls ?? []) {
        const seen = calls.get(call.index) ?? { name: "", arguments: "" };
        seen.name += call.function?.name ?? "";
        seen.arguments += call.function?.arguments ?? "";
        calls.set(call.index, seen);
      }
    }
    expect(text).toBe("Looking up both.");
    expect([...calls.values()].map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["getWeather", { city: "Paris" }],
      ["getWeather", { city: "Tokyo" }],
    ]);

    const textStream = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: [
        { role: "user", content: "Paris and Tokyo: what is it like there?" },
        {
          role: "assistant",
          content: "Looking up both.",
          tool_calls: [
            { id: "p", type: "function", function: { name: "getWeather", arguments: "{}" } },
            { id: "t", type: "function", function: { name: "getWeather", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "p", content: "Paris: rain" },
        { role: "tool", tool_call_id: "t", content: [{ type: "text", text: "Tokyo: clear" }] },
      ],
      stream: true,
    });
    let answer = "";
    for await (const chunk of textStream) answer += chunk.choices[0]?.delta?.content ?? "";
    expect(answer).toBe("Both:\nParis: rain\nTokyo: clear\nLast: Tokyo: clear");
  });

  it("matches rules on the last user message, so a new question starts the steps again", async () => {
    const completion = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: [
        ...afterWeatherCall,
        { role: "assistant", content: "In Lisbon: sunny" },
        {
          role: "user",
          content: "and the weather in Oslo?",
        },
      ],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({
      city: "Oslo",
      days: 1,
    });
  });

  it("answers from the default when no rule matches, quoting the input", async () => {
    const completion = await client.chat.completions.create({
      model: "tiny-scripted",
      messages: [{ role: "user", content: "hello there" }],
    });
    expect(completion.choices[0]?.message.content).toBe(
      "Ask about the weather. You said: hello there",
    );
  });

  it("answers HTTP 400 naming the rule when asked past its last step", async () => {
    const request = client.chat.completions.create({
      model: "tiny-scripted",
      messages: [
        { role: "user", content: "just call ping" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "x", type: "function", function: { name: "ping", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "x", content: "pong" },
      ],
    });
    await expect(request).rejects.toBeInstanceOf(BadRequestError);
    await expect(request).rejects.toThrow(
      'rule "calls only" has 1 step(s), and this is model call 2 since the last user message',
    );
  });
});

describe("yiem-scripted-model start and stop", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("exits 0 on %s", async (signal) => {
    const { process } = await serve(EXAMPLE_SCRIPT);
    process.signal(signal);
    expect(await process.exited).toBe(0);
    await process.waitForLine((l) => l === `yiem-scripted-model: stopped (${signal})`);
  });

  it.each([
    [
      "a misspelt field",
      { rules: [{ match: { contains: "x" }, steps: [{ toolcalls: [] }] }] },
      "rules[0].steps[0].toolcalls: unknown field (expected toolCalls, text)",
    ],
    [
      "a tool call without a name",
      { default: { steps: [{ toolCalls: [{ arguments: {} }] }] } },
      "default.steps[0].toolCalls[0].name: is missing",
    ],
    [
      "an invalid regex",
      { rules: [{ match: { regex: "(unclosed" }, steps: [{ text: "x" }] }] },
      "rules[0].match.regex: Invalid regular expression",
    ],
    [
      "an unknown placeholder",
      { default: { steps: [{ text: "{{reslt}}" }] } },
      "default.steps[0].text: unknown placeholder {{reslt}}",
    ],
    [
      "a regex group the rule does not have",
      { rules: [{ match: { regex: "in (\\w+)" }, steps: [{ text: "{{match.city}}" }] }] },
      "rules[0].steps[0].text: {{match.city}}: the rule's match has no such group",
    ],
    [
      "a text step before a tool-call step",
      { default: { steps: [{ text: "done" }, { toolCalls: [{ name: "f" }] }] } },
      "default.steps[0]: a text step ends the run, so it must be the last",
    ],
    ["a file that is not JSON", "{ rules: [] ", "not JSON"],
  ])("exits 1 on a script with %s, naming the field", async (_case, content, message) => {
    const path = await scriptFile("bad.json", content);
    const process = startCommand(["--script", path, "--port", "0"]);
    expect(await process.exited).toBe(1);
    await process.waitForLine((l) => l.startsWith(`yiem-scripted-model: ${path}: ${message}`));
    expect(process.lines.join("\n")).not.toContain("serving");
  });

  it("exits 2 with the usage when --script is missing", async () => {
    const process = startCommand(["--port", "0"]);
    expect(await process.exited).toBe(2);
    await process.waitForLine((l) => l === "yiem-scripted-model: --script FILE is required");
    await process.waitForLine((l) => l.startsWith("Usage: yiem-scripted-model --script FILE"));
  });
});

describe("a YiemAgent on yiem-scripted-model", () => {
  it("calls a real tool as the shipped example script says and answers with its results", async () => {
    const { process, baseURL } = await serve(EXAMPLE_SCRIPT);
    const getTime = getBuiltinTools().filter((tool) => tool.name === "getTime");
    const agent = new YiemAgent({
      llmCall: createOpenAILlmCall({
        model: "scripted-model",
        baseURL,
        apiKey: "any",
        stream: true,
      }),
      tools: getTime,
    });
    try {
      agent.run("What time is it in Tokyo and in Lima?");
      const answer = await agent.takeResponse();
      expect(answer.stopReason).toBe("stop");
      const text = answer.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      expect(text).toMatch(
        /^Here you are:\nCurrent time in Asia\/Tokyo: .+\nCurrent time in America\/Lima: .+$/,
      );
    } finally {
      await agent.shutdown();
    }
    // Each request's log line (waitForLine fails the test when one never comes).
    await process.waitForLine(
      (l) => l === '#0 rule "tokyo and lima", step 1 of 2: tool calls getTime, getTime',
    );
    await process.waitForLine((l) => l === '#1 rule "tokyo and lima", step 2 of 2: text');
  });
});
