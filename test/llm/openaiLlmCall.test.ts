import type { ToolCallContent } from "@yiem/core";
import { createOpenAILlmCall } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { request, scriptedServer } from "./support.js";

const parisAndTokyo = [
  { id: "call_paris", name: "getWeather", arguments: { city: "Paris" } },
  { id: "call_tokyo", name: "getWeather", arguments: { city: "Tokyo", unit: "celsius" } },
];

function toolCalls(content: readonly { type: string }[]): ToolCallContent[] {
  return content.filter((block): block is ToolCallContent => block.type === "toolCall");
}

describe.each([false, true])(
  "lifecycle §5 llmCall over HTTP: createOpenAILlmCall (stream: %s)",
  (stream) => {
    it("returns a plain text answer with usage, api, provider and model", async () => {
      const server = await scriptedServer({ replies: [{ kind: "text", text: "Hello there!" }] });
      const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream });
      const before = Date.now();
      const answer = await llmCall(request);
      expect(answer).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "Hello there!" }],
        stopReason: "stop",
        api: "openai-chat-completions",
        provider: "openai",
        model: "scripted-model",
      });
      expect(answer.errorMessage).toBeUndefined();
      expect(answer.timestamp).toBeGreaterThanOrEqual(before);
      expect(answer.usage?.inputTokens).toBeGreaterThan(0);
      expect(answer.usage?.outputTokens).toBe(Math.ceil("Hello there!".length / 4));
      expect(answer.usage?.totalTokens).toBe(
        (answer.usage?.inputTokens ?? 0) + (answer.usage?.outputTokens ?? 0),
      );
    });

    it("returns parallel tool calls with parsed arguments and the raw strings", async () => {
      const server = await scriptedServer({
        replies: [
          { kind: "toolCalls", calls: parisAndTokyo, text: "Checking.", argumentChunks: 4 },
        ],
      });
      const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream });
      const answer = await llmCall(request);
      expect(answer.stopReason).toBe("toolUse");
      expect(answer.content[0]).toEqual({ type: "text", text: "Checking." });
      expect(toolCalls(answer.content)).toEqual([
        {
          type: "toolCall",
          id: "call_paris",
          name: "getWeather",
          arguments: { city: "Paris" },
          rawArguments: '{"city":"Paris"}',
        },
        {
          type: "toolCall",
          id: "call_tokyo",
          name: "getWeather",
          arguments: { city: "Tokyo", unit: "celsius" },
          rawArguments: '{"city":"Tokyo","unit":"celsius"}',
        },
      ]);
    });

    it("keeps a malformed argument string in rawArguments with arguments {}", async () => {
      const server = await scriptedServer({
        replies: [
          {
            kind: "toolCalls",
            calls: [{ id: "c1", name: "getWeather", arguments: '{"city": "Par' }],
            argumentChunks: 3,
          },
        ],
      });
      const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream });
      const answer = await llmCall(request);
      expect(answer.stopReason).toBe("toolUse");
      expect(toolCalls(answer.content)).toEqual([
        {
          type: "toolCall",
          id: "c1",
          name: "getWeather",
          arguments: {},
          rawArguments: '{"city": "Par',
        },
      ]);
    });

    it("maps reasoning_content to a thinking block before the text", async () => {
      const server = await scriptedServer({
        replies: [{ kind: "text", text: "42", thinking: "The user wants the answer." }],
      });
      const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream });
      const answer = await llmCall(request);
      expect(answer.content).toEqual([
        { type: "thinking", thinking: "The user wants the answer." },
        { type: "text", text: "42" },
      ]);
    });

    it("maps finish_reason length to stopReason length", async () => {
      const server = await scriptedServer({
        replies: [{ kind: "text", text: "cut", finishReason: "length" }],
      });
      const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream })(
        request,
      );
      expect(answer.stopReason).toBe("length");
    });

    it("sends model, messages, tools and options to the server", async () => {
      const server = await scriptedServer({ replies: [{ kind: "text", text: "ok" }] });
      const llmCall = createOpenAILlmCall({
        model: "my-model",
        baseURL: server.baseURL,
        stream,
        temperature: 0.2,
        extraBody: { top_k: 5 },
      });
      await llmCall(request);
      const body = server.requests[0]?.body;
      expect(body).toMatchObject({
        model: "my-model",
        messages: request.messages,
        tools: request.tools,
        temperature: 0.2,
        top_k: 5,
      });
      if (stream)
        expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      else expect(body?.stream).toBeFalsy();
    });

    it("omits tools from the request when there are none", async () => {
      const server = await scriptedServer({ replies: [{ kind: "text", text: "ok" }] });
      await createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream })({
        messages: request.messages,
        tools: [],
      });
      expect(server.requests[0]?.body).not.toHaveProperty("tools");
    });
  },
);

describe("lifecycle §5 llmCall over HTTP: createOpenAILlmCall streaming", () => {
  it("streams parallel tool calls with argument deltas and accumulates them", async () => {
    const calls = [
      { id: "a", name: "getWeather", arguments: { city: "Paris", days: [1, 2, 3] } },
      { id: "b", name: "getTime", arguments: { timezone: "Asia/Tokyo" } },
      { id: "c", name: "getWeather", arguments: { city: "Zürich ☃" } },
    ];
    const server = await scriptedServer({
      replies: [{ kind: "toolCalls", calls, argumentChunks: 5 }],
    });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream: true });
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("toolUse");
    expect(
      toolCalls(answer.content).map(({ id, name, arguments: args }) => ({ id, name, args })),
    ).toEqual(calls.map(({ id, name, arguments: args }) => ({ id, name, args })));
    expect(answer.usage?.outputTokens).toBeGreaterThan(0);
  });

  it("tells onTextDelta each piece of answer text as it arrives (not reasoning, not arguments)", async () => {
    const server = await scriptedServer({
      replies: [{ kind: "text", text: "one two three four", thinking: "hmm", textChunks: 4 }],
    });
    const pieces: string[] = [];
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream: true });
    const answer = await llmCall(request, undefined, { onTextDelta: (d) => pieces.push(d) });
    expect(pieces).toHaveLength(4);
    expect(pieces.join("")).toBe("one two three four");
    expect(answer.content).toContainEqual({ type: "text", text: "one two three four" });
  });

  it("ignores an onTextDelta that throws; a plain (not streamed) call reports no piece", async () => {
    const server = await scriptedServer({
      replies: [
        { kind: "text", text: "still answered" },
        { kind: "text", text: "plain" },
      ],
    });
    const throwing = () => {
      throw new Error("sink broke");
    };
    const streamed = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream: true });
    const answer = await streamed(request, undefined, { onTextDelta: throwing });
    expect(answer).toMatchObject({ stopReason: "stop", content: [{ text: "still answered" }] });
    const pieces: string[] = [];
    const plain = createOpenAILlmCall({ model: "m", baseURL: server.baseURL });
    await plain(request, undefined, { onTextDelta: (d) => pieces.push(d) });
    expect(pieces).toEqual([]);
  });

  it("reads a hand-written SSE stream whose tool call has no id and usage comes last", async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ model: "raw", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = [
      chunk({ role: "assistant", reasoning_content: "hmm" }),
      chunk({ tool_calls: [{ index: 0, function: { name: "getTime", arguments: '{"tz"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':"UTC"}' } }] }),
      chunk({}, "stop"),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n`,
      "data: [DONE]\n\n",
    ].join("");
    const server = await scriptedServer({ replies: [{ kind: "malformed", body }] });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream: true })(
      request,
    );
    expect(answer.stopReason).toBe("toolUse");
    expect(answer.model).toBe("raw");
    expect(answer.usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(answer.content[0]).toEqual({ type: "thinking", thinking: "hmm" });
    const [call] = toolCalls(answer.content);
    expect(call).toMatchObject({ name: "getTime", arguments: { tz: "UTC" } });
    expect(call?.id).toMatch(/^call_[0-9a-f]+$/);
  });
});

describe("lifecycle §7 llmCall over HTTP: response mapping to assistant content", () => {
  it("generates an id for a tool call that came without one", async () => {
    const body = JSON.stringify({
      model: "raw",
      choices: [
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ type: "function", function: { name: "getTime", arguments: "{}" } }],
          },
          finish_reason: "stop",
        },
      ],
    });
    const server = await scriptedServer({ replies: [{ kind: "malformed", body }] });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL })(request);
    expect(answer.stopReason).toBe("toolUse");
    const [call] = toolCalls(answer.content);
    expect(call?.id).toMatch(/^call_[0-9a-f]+$/);
    expect(answer.usage).toBeUndefined();
  });

  it("turns finish_reason content_filter into an error with a message", async () => {
    const body = JSON.stringify({
      choices: [{ message: { role: "assistant", content: "" }, finish_reason: "content_filter" }],
    });
    const server = await scriptedServer({ replies: [{ kind: "malformed", body }] });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL })(request);
    expect(answer.stopReason).toBe("error");
    expect(answer.errorMessage).toContain("content_filter");
    expect(answer.model).toBe("m");
  });

  it("uses the provider given in the options", async () => {
    const server = await scriptedServer({ replies: [{ kind: "text", text: "ok" }] });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, provider: "vllm" });
    expect((await llmCall(request)).provider).toBe("vllm");
  });
});
