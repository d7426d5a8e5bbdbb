import { readFileSync } from "node:fs";
import type { AssistantMessage } from "@yiem/core";
import { createOpenAILlmCall } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { request, scriptedServer } from "./support.js";

type Mode = "plain" | "stream";

/** A provider's recorded answer from `fixtures/`: the `.sse` stream or the `.json` body. */
function fixture(name: string, mode: Mode): string {
  const file = `${name}.${mode === "stream" ? "sse" : "json"}`;
  return readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8");
}

/** Replays a fixture through a real HTTP server and the real SDK; collects the live deltas. */
async function replay(
  name: string,
  mode: Mode,
  options: { provider?: string } = {},
): Promise<{ answer: AssistantMessage; deltas: string[] }> {
  const server = await scriptedServer({
    replies: [{ kind: "recorded", body: fixture(name, mode) }],
  });
  const llmCall = createOpenAILlmCall({
    model: "m",
    baseURL: server.baseURL,
    stream: mode === "stream",
    maxRetries: 0,
    ...options,
  });
  const deltas: string[] = [];
  const answer = await llmCall(request, undefined, { onTextDelta: (d) => deltas.push(d) });
  return { answer, deltas };
}

describe.each<Mode>(["plain", "stream"])("provider answers over HTTP (%s)", (mode) => {
  it("surfaces OpenAI's refusal as the answer's text with stopReason refusal", async () => {
    const { answer, deltas } = await replay("openai-refusal", mode);
    expect(answer.stopReason).toBe("refusal");
    expect(answer.content).toEqual([
      { type: "text", text: "I'm sorry, I can't assist with that request." },
    ]);
    expect(answer.errorMessage).toBeUndefined();
    expect(deltas.join("")).toBe(
      mode === "stream" ? "I'm sorry, I can't assist with that request." : "",
    );
  });

  it("reads only choice 0 of an OpenAI answer with two choices (n: 2)", async () => {
    const { answer } = await replay("openai-two-choices", mode);
    expect(answer.stopReason).toBe("toolUse");
    expect(answer.content).toEqual([
      {
        type: "toolCall",
        id: "call_choice0",
        name: "getWeather",
        arguments: { city: "Paris" },
        rawArguments: '{"city":"Paris"}',
      },
    ]);
  });

  it("keeps Mistral magistral's thinking content parts as thinking, apart from the text", async () => {
    const { answer, deltas } = await replay("mistral-magistral-thinking", mode, {
      provider: "mistral",
    });
    expect(answer).toMatchObject({ stopReason: "stop", model: "magistral-medium-2509" });
    expect(answer.content).toEqual([
      {
        type: "thinking",
        thinking: "The user asks for the weather; I have no tool result yet, so I say so.",
      },
      { type: "text", text: "I can't see the weather without a tool." },
    ]);
    if (mode === "stream") expect(deltas.join("")).toBe("I can't see the weather without a tool.");
  });

  it("counts xAI's reasoning tokens, reported apart from completion_tokens, as output", async () => {
    const { answer } = await replay("xai-grok-reasoning-usage", mode, { provider: "xai" });
    expect(answer.content).toEqual([
      { type: "thinking", thinking: "Sunny in Paris, per the tool." },
      { type: "text", text: "It is sunny." },
    ]);
    expect(answer.usage).toEqual({
      inputTokens: 32,
      outputTokens: 9 + 94,
      totalTokens: 135,
      reasoningTokens: 94,
      cachedInputTokens: 6,
    });
  });

  it("counts Gemini's reasoning tokens, reported apart from completion_tokens, as output", async () => {
    const { answer } = await replay("gemini-openai-compat-reasoning-usage", mode, {
      provider: "gemini",
    });
    expect(answer.content).toEqual([{ type: "text", text: "Two O's: G-o-o-g-l-e." }]);
    expect(answer.usage).toEqual({
      inputTokens: 19,
      outputTokens: 12 + 109,
      totalTokens: 140,
      reasoningTokens: 109,
    });
  });
});

describe("provider answers over HTTP: usage of plain answers", () => {
  it("does not count OpenAI's reasoning tokens twice: completion_tokens includes them", async () => {
    const { answer } = await replay("openai-o4-mini-reasoning-usage", "plain");
    expect(answer.usage).toEqual({
      inputTokens: 2006,
      outputTokens: 300,
      totalTokens: 2306,
      reasoningTokens: 256,
      cachedInputTokens: 1920,
    });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens as cached input tokens", async () => {
    const { answer } = await replay("deepseek-cache-hit-usage", "plain", { provider: "deepseek" });
    expect(answer.usage).toEqual({
      inputTokens: 1540,
      outputTokens: 9,
      totalTokens: 1549,
      cachedInputTokens: 1536,
    });
  });
});

describe("provider answers over HTTP: a stream that fails part way", () => {
  it("keeps the text OpenAI streamed before its error event, with the error", async () => {
    const { answer, deltas } = await replay("openai-error-mid-stream", "stream");
    expect(deltas.join("")).toBe("Paris is sunny today, 21");
    expect(answer.stopReason).toBe("error");
    expect(answer.content).toEqual([{ type: "text", text: "Paris is sunny today, 21" }]);
    expect(answer.model).toBe("gpt-4o-2024-08-06");
    expect(answer.errorMessage).toBe(
      "Error in the model server's stream: The server had an error while processing your request. Sorry about that!",
    );
  });
});
