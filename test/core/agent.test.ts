import {
  type AgentEvent,
  type AgentMessage,
  AgentShutdownError,
  type AgentTool,
  type AssistantMessage,
  createOpenAILlmCall,
  followUp,
  runAgent,
  takeResponse,
  YiemAgent,
  type YiemAgentOptions,
} from "@yiem/core";
import {
  type ScriptedModelServer,
  type ScriptedReply,
  startScriptedModelServer,
} from "@yiem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, firstText, makeTool, sleep, textResult } from "../support/toolFixtures.js";

let server: ScriptedModelServer | undefined;
const agents: YiemAgent[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.shutdown();
  await server?.close();
  server = undefined;
});

async function agentWith(
  replies: ScriptedReply[],
  options: Partial<YiemAgentOptions> = {},
  stream = false,
): Promise<YiemAgent> {
  server = await startScriptedModelServer({ replies });
  const llmCall = createOpenAILlmCall({
    model: "scripted",
    baseURL: server.baseURL,
    apiKey: "k",
    stream,
    maxRetries: 0,
  });
  const agent = new YiemAgent({ llmCall, ...options });
  agents.push(agent);
  return agent;
}

/** The messages the model received in request `index`, as `role:text` strings. */
function sentMessages(index: number): string[] {
  const messages = (server?.requests[index]?.body.messages ?? []) as Array<Record<string, unknown>>;
  return messages.map(
    (m) => `${m.role}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`,
  );
}

const weather: AgentTool = makeTool("getWeather", {
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: (_id, args) => textResult(`Weather in ${String(args.city)}: Sunny, 22°C`),
});

describe("lifecycle §16 the complete lifecycle, over HTTP", () => {
  it("runs getWeather for the model and returns its final answer", async () => {
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [{ id: "call_1", name: "getWeather", arguments: { city: "Tokyo" } }],
        },
        { kind: "text", text: "The weather in Tokyo is sunny, 22°C." },
      ],
      { tools: [weather], systemPrompt: "You are a helpful assistant." },
    );
    agent.run("What's the weather in Tokyo?");
    const response = await agent.takeResponse();
    expect(firstText(response)).toBe("The weather in Tokyo is sunny, 22°C.");
    expect(response.stopReason).toBe("stop");
    expect(agent.state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(sentMessages(1)).toEqual([
      "system:You are a helpful assistant.",
      "user:What's the weather in Tokyo?",
      "assistant:null",
      "tool:Weather in Tokyo: Sunny, 22°C",
    ]);
    const toolMessage = (server?.requests[1]?.body.messages ?? [])[3];
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(server?.requests[0]?.body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "getWeather",
          description: weather.description,
          parameters: weather.inputSchema,
        },
      },
    ]);
  });

  it("runs streamed parallel tool calls with argument deltas and keeps call order", async () => {
    const zones = ["Asia/Tokyo", "Europe/London", "America/New_York"];
    const clock = makeTool("getTime", {
      parallelToolExecute: true,
      execute: async (_id, args) => {
        await sleep(zones.length * 10 - zones.indexOf(String(args.timezone)) * 10);
        return textResult(`time in ${String(args.timezone)}`);
      },
    });
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          argumentChunks: 4,
          calls: zones.map((timezone, i) => ({
            id: `t${i}`,
            name: "getTime",
            arguments: { timezone },
          })),
        },
        { kind: "text", text: "done" },
      ],
      { tools: [clock] },
      true,
    );
    agent.run("What time is it in three cities?");
    expect(firstText(await agent.takeResponse())).toBe("done");
    expect(sentMessages(1).slice(-3)).toEqual(zones.map((zone) => `tool:time in ${zone}`));
  });

  it("emits the agent's events around the tool events", async () => {
    const events: AgentEvent[] = [];
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [{ id: "c1", name: "getWeather", arguments: { city: "Oslo" } }],
        },
        { kind: "text", text: "ok" },
      ],
      { tools: [weather], agentEventSink: (event) => void events.push(event) },
    );
    agent.run("weather?");
    await agent.takeResponse();
    expect(
      events.map((e) => (e.type === "messageEnd" ? `messageEnd:${e.message.role}` : e.type)),
    ).toEqual([
      "agentStart",
      "messageEnd:user",
      "turnStart",
      "messageEnd:assistant",
      "toolExecStart",
      "toolExecEnd",
      "messageEnd:toolResult",
      "turnEnd",
      "turnStart",
      "messageEnd:assistant",
      "turnEnd",
      "agentEnd",
    ]);
  });

  it("streamed, the event sink also gets the answer's text as it comes, before its messageEnd", async () => {
    const events: AgentEvent[] = [];
    const agent = await agentWith(
      [{ kind: "text", text: "Sunny in Oslo, 22°C today.", textChunks: 3 }],
      { agentEventSink: (event) => void events.push(event) },
      true,
    );
    agent.run("weather?");
    const response = await agent.takeResponse();
    const types = events.map((e) => e.type);
    const deltas = events.flatMap((e) => (e.type === "messageUpdate" ? [e.delta] : []));
    expect(deltas).toHaveLength(3);
    expect(deltas.join("")).toBe(firstText(response));
    expect(types.slice(types.indexOf("turnStart"), types.indexOf("turnEnd"))).toEqual([
      "turnStart",
      "messageUpdate",
      "messageUpdate",
      "messageUpdate",
      "messageEnd",
    ]);
  });
});

describe("lifecycle §12 errors reach the model, the run goes on", () => {
  it("feeds malformed arguments and an unknown tool back as error results", async () => {
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [
            { id: "bad", name: "getWeather", arguments: "{city: Tokyo" },
            { id: "ghost", name: "teleport", arguments: {} },
            { id: "ok", name: "getWeather", arguments: { city: "Rome" } },
          ],
        },
        { kind: "text", text: "recovered" },
      ],
      { tools: [weather] },
    );
    agent.run("go");
    expect(firstText(await agent.takeResponse())).toBe("recovered");
    const results = sentMessages(1).slice(-3);
    expect(results[0]).toMatch(/^tool:getWeather: arguments are not valid JSON/);
    expect(results[1]).toBe('tool:Tool "teleport" not found. Available tools: getWeather');
    expect(results[2]).toBe("tool:Weather in Rome: Sunny, 22°C");
  });

  it("ends the run with the model server's HTTP error as an error response", async () => {
    const agent = await agentWith([
      { kind: "httpError", status: 400, message: "bad request: context too long" },
    ]);
    agent.run("hi");
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toMatch(/400/);
    expect(response.errorMessage).toMatch(/context too long/);
  });

  it("stops after maxTurns with a clear error", async () => {
    const loopCall: ScriptedReply = {
      kind: "toolCalls",
      calls: [{ name: "getWeather", arguments: { city: "Oslo" } }],
    };
    const agent = await agentWith([loopCall, loopCall, loopCall, loopCall], {
      tools: [weather],
      maxTurns: 3,
    });
    agent.run("loop forever");
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toBe(
      "The run stopped after 3 turns (maxTurns) without a final answer",
    );
    expect(server?.requests).toHaveLength(3);
  });
});

describe("hostile input: configurable caps", () => {
  it("applies the agent's own caps on calls per message and argument size", async () => {
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [
            { id: "a", name: "getWeather", arguments: { city: "Oslo" } },
            { id: "b", name: "getWeather", arguments: { city: "x".repeat(100) } },
            { id: "c", name: "getWeather", arguments: { city: "Rome" } },
          ],
        },
        { kind: "text", text: "ok" },
      ],
      { tools: [weather], limits: { maxToolCalls: 2, maxArgumentBytes: 64 } },
    );
    agent.run("go");
    await agent.takeResponse();
    const results = sentMessages(1).slice(-3);
    expect(results[0]).toBe("tool:Weather in Oslo: Sunny, 22°C");
    expect(results[1]).toMatch(/^tool:getWeather: arguments are too large: \d+ bytes \(limit 64\)/);
    expect(results[2]).toBe(
      "tool:too many tool calls in one message: 3 (limit 2); this call was not run",
    );
  });
});

describe("lifecycle §10 a terminating batch ends the run", () => {
  it("builds the terminated final response without another LLM call", async () => {
    const done = makeTool("deploy", {
      execute: () => textResult("deployed v2", { terminate: true }),
    });
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [
            { id: "a", name: "deploy", arguments: {} },
            { id: "b", name: "deploy", arguments: {} },
          ],
        },
      ],
      { tools: [done] },
    );
    agent.run("ship it");
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("toolUseTerminated");
    expect(response.content.map((b) => b.type === "text" && b.text)).toEqual([
      "Tool execution completed.",
      "deployed v2",
      "deployed v2",
    ]);
    expect(response.errorMessage).toBeUndefined();
    expect(response.model).toBe("scripted-model");
    expect(server?.requests).toHaveLength(1);
  });

  it("reports a failed call in the terminated response's errorMessage", async () => {
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          calls: [
            { id: "a", name: "getWeather", arguments: { city: "X" } },
            { id: "b", name: "broken", arguments: {} },
          ],
        },
      ],
      {
        tools: [
          weather,
          makeTool("broken", {
            execute: () => {
              throw new Error("disk full");
            },
          }),
        ],
        afterToolCall: () => ({ terminate: true }),
      },
    );
    agent.run("go");
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("toolUseTerminated");
    expect(response.errorMessage).toBe("One or more tool calls failed");
  });
});

describe("lifecycle §5 input and follow-ups while busy", () => {
  function blockingTool() {
    const started = deferred();
    const release = deferred();
    const tool = makeTool("slow", {
      execute: async () => {
        started.resolve();
        await release.promise;
        return textResult("slow done");
      },
    });
    return { tool, started, release };
  }

  it("gives a follow-up sent while a tool runs its own run and its own response, after the first", async () => {
    const { tool, started, release } = blockingTool();
    const agent = await agentWith(
      [
        { kind: "toolCalls", calls: [{ id: "s", name: "slow", arguments: {} }] },
        { kind: "text", text: "first answer" },
        { kind: "text", text: "second answer" },
      ],
      { tools: [tool] },
    );
    agent.run("first");
    await started.promise;
    agent.followUp("second");
    release.resolve();
    expect(firstText(await agent.takeResponse())).toBe("first answer");
    expect(firstText(await agent.takeResponse())).toBe("second answer");
    expect(sentMessages(1)).not.toContain("user:second");
    expect(sentMessages(2).slice(-1)).toEqual(["user:second"]);
  });

  it("joins input sent while busy to the current run before its next LLM call", async () => {
    const { tool, started, release } = blockingTool();
    const agent = await agentWith(
      [
        { kind: "toolCalls", calls: [{ id: "s", name: "slow", arguments: {} }] },
        { kind: "text", text: "both handled" },
      ],
      { tools: [tool] },
    );
    agent.run("first");
    await started.promise;
    agent.run("also this");
    release.resolve();
    expect(firstText(await agent.takeResponse())).toBe("both handled");
    expect(sentMessages(1).slice(-2)).toEqual(["tool:slow done", "user:also this"]);
    const extra = await Promise.race([
      agent.takeResponse().then(() => "response"),
      sleep(100).then(() => "none"),
    ]);
    expect(extra).toBe("none");
  });

  it("starts a run for a follow-up on an idle agent, and accepts YiemAgent-style free functions and OpenAI-style input", async () => {
    const agent = await agentWith([
      { kind: "text", text: "one" },
      { kind: "text", text: "two" },
    ]);
    followUp(agent, { role: "user", content: "idle follow-up" });
    expect(firstText(await takeResponse(agent))).toBe("one");
    runAgent(agent, { role: "user", content: [{ type: "text", text: "parts" }] });
    expect(firstText(await takeResponse(agent))).toBe("two");
    expect(sentMessages(1).slice(-1)).toEqual(["user:parts"]);
  });
});

describe("abort and shutdown", () => {
  it("aborts a running tool, ends the run 'aborted' and makes no further LLM call", async () => {
    let toolSignal: AbortSignal | undefined;
    const started = deferred();
    const hanging = makeTool("hang", {
      execute: (_i, _a, signal) => {
        toolSignal = signal;
        started.resolve();
        return new Promise(() => {});
      },
    });
    const agent = await agentWith(
      [
        { kind: "toolCalls", calls: [{ id: "h", name: "hang", arguments: {} }] },
        { kind: "text", text: "never" },
      ],
      { tools: [hanging] },
    );
    agent.run("go");
    await started.promise;
    agent.abort();
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("aborted");
    expect(toolSignal?.aborted).toBe(true);
    expect(server?.requests).toHaveLength(1);
    const result = agent.state.messages.at(-1);
    expect(result?.role === "toolResult" && firstText(result)).toBe("Operation aborted");
  });

  it("aborts a hanging LLM call", async () => {
    const agent = await agentWith([{ kind: "hang" }]);
    agent.run("go");
    await sleep(50);
    agent.abort();
    expect((await agent.takeResponse()).stopReason).toBe("aborted");
  });

  it("rejects waiting takeResponse calls and new input after shutdown", async () => {
    const agent = await agentWith([{ kind: "hang" }]);
    agent.run("go");
    const pending = agent.takeResponse();
    const second = agent.takeResponse();
    await sleep(20);
    await agent.shutdown();
    expect((await pending).stopReason).toBe("aborted");
    await expect(second).rejects.toBeInstanceOf(AgentShutdownError);
    expect(() => agent.run("late")).toThrow(/shut down/);
  });
});

describe("lifecycle §14 hooks", () => {
  it("uses custom prepareContext and formatMsgForLLM", async () => {
    const agent = await agentWith([{ kind: "text", text: "ok" }], {
      tools: [weather],
      prepareContext: (state) => ({
        systemPrompt: `${state.systemPrompt} Today is Monday.`,
        messages: [...state.messages],
        tools: new Map(),
      }),
      formatMsgForLLM: (ctx) => ({
        messages: [
          { role: "system", content: ctx.systemPrompt },
          { role: "user", content: `[${ctx.messages.length} messages]` },
        ],
        tools: [],
      }),
    });
    agent.run("hello");
    await agent.takeResponse();
    expect(sentMessages(0)).toEqual([
      "system:You are helpful assistant. Today is Monday.",
      "user:[1 messages]",
    ]);
    expect(server?.requests[0]?.body.tools).toBeUndefined();
  });
});

describe("a tool call's id", () => {
  it("is generated once for a call that came without one: the stored block, its events and its result share it", async () => {
    const events: AgentEvent[] = [];
    const answers: AssistantMessage[] = [
      answer("toolUse", [
        { type: "tool_call", name: "getWeather", arguments: { city: "Tokyo" } },
      ] as unknown as AssistantMessage["content"]),
      answer("stop", [{ type: "text", text: "done" }]),
    ];
    const agent = new YiemAgent({
      llmCall: async () => answers.shift() ?? answer("stop", []),
      tools: [weather],
      agentEventSink: (event) => void events.push(event),
    });
    agents.push(agent);
    agent.run("weather?");
    await agent.takeResponse();
    const [block] = toolCallBlocks(agent.state.messages[1]) as Array<{ id: string }>;
    expect(block?.id).toMatch(/^call_[0-9a-f]{24}$/);
    const ids = events.flatMap((e) =>
      e.type === "toolExecStart" || e.type === "toolExecEnd" ? [e.toolCallId] : [],
    );
    expect(ids).toEqual([block?.id, block?.id]);
    const result = agent.state.messages[2];
    expect(result?.role === "toolResult" && result.toolCallId).toBe(block?.id);
  });
});

/** A scripted model answer. */
function answer(
  stopReason: AssistantMessage["stopReason"],
  content: AssistantMessage["content"],
): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: "test",
    provider: "test",
    model: "m",
    stopReason,
    timestamp: 0,
  };
}

/** The tool-call blocks of a message, as stored or announced. */
function toolCallBlocks(message: AgentMessage | undefined): unknown[] {
  if (message?.role !== "assistant") return [];
  return message.content.filter((block) => block.type === "toolCall");
}

describe("the transcript keeps the model's tool arguments", () => {
  it("stores, announces and hands hooks the parsed arguments of a streamed JSON-string call; a malformed one keeps {} and its raw text", async () => {
    const goodRaw = '{"city":"Tokyo","days":[1,2]}';
    const events: AgentEvent[] = [];
    const hookSaw: unknown[] = [];
    const agent = await agentWith(
      [
        {
          kind: "toolCalls",
          argumentChunks: 3,
          calls: [
            { id: "good", name: "getWeather", arguments: goodRaw },
            { id: "bad", name: "getWeather", arguments: "{city: Tokyo" },
          ],
        },
        { kind: "text", text: "done" },
      ],
      {
        tools: [weather],
        agentEventSink: (event) => void events.push(event),
        beforeToolCall: ({ assistantMessage }) => {
          hookSaw.push(...toolCallBlocks(assistantMessage));
          return undefined;
        },
      },
      true,
    );
    agent.run("weather?");
    expect(firstText(await agent.takeResponse())).toBe("done");
    const expected = [
      {
        type: "toolCall",
        id: "good",
        name: "getWeather",
        arguments: { city: "Tokyo", days: [1, 2] },
        rawArguments: goodRaw,
      },
      {
        type: "toolCall",
        id: "bad",
        name: "getWeather",
        arguments: {},
        rawArguments: "{city: Tokyo",
      },
    ];
    expect(toolCallBlocks(agent.state.messages[1])).toEqual(expected);
    const announced = events.flatMap((e) =>
      e.type === "messageEnd" && e.message.role === "assistant" ? [e.message] : [],
    );
    expect(toolCallBlocks(announced[0])).toEqual(expected);
    expect(hookSaw[0]).toEqual(expected[0]); // only the good call reaches the hook
    const results = sentMessages(1).slice(-2);
    expect(results[0]).toBe("tool:Weather in Tokyo: Sunny, 22°C");
    expect(results[1]).toMatch(/^tool:getWeather: arguments are not valid JSON/);
  });

  it("keeps the stored arguments as the model sent them when a tool rewrites its own in place", async () => {
    const shout = makeTool("shout", {
      prepareArguments: (args) => {
        args.word = String(args.word).toUpperCase();
        return args;
      },
      execute: (_id, args) => textResult(String(args.word)),
    });
    const agent = await agentWith(
      [
        { kind: "toolCalls", calls: [{ id: "s1", name: "shout", arguments: { word: "hey" } }] },
        { kind: "text", text: "ok" },
      ],
      { tools: [shout] },
    );
    agent.run("shout");
    await agent.takeResponse();
    expect(sentMessages(1).at(-1)).toBe("tool:HEY");
    expect(toolCallBlocks(agent.state.messages[1])).toEqual([
      expect.objectContaining({ id: "s1", arguments: { word: "hey" } }),
    ]);
  });
});
