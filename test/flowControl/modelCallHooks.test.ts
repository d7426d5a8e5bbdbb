/**
 * The parts of flow control around one model call (issue 33, items 1 and 5): the adapter
 * tells a gate before each request and each refusal with the wait the server asked for; the
 * scripted model refuses requests past its limits as a provider does; `YIEM_MODEL_LIMITS` is
 * checked at start.
 */
import { ConfigError, createOpenAILlmCall, readModelLimits } from "@yiem/core";
import { limitOfCall, limitOfModel, requestedWaitMs } from "@yiem/core/internal";
import { startScriptedModelServer } from "@yiem/testing";
import { describe, expect, it } from "vitest";

const request = { messages: [{ role: "user" as const, content: "hi" }], tools: [] };

describe("the adapter's request hooks", () => {
  it("asks before each request and tells each refusal with the server's wait", async () => {
    const server = await startScriptedModelServer({
      replies: [
        { kind: "httpError", status: 429, message: "slow down", retryAfterSeconds: 3 },
        { kind: "text", text: "hello" },
      ],
    });
    try {
      const llmCall = createOpenAILlmCall({
        model: "m",
        baseURL: server.baseURL,
        maxRetryDelayMs: 1, // the test does not wait the 3 s
      });
      const told: unknown[] = [];
      const answer = await llmCall(request, undefined, {
        beforeRequest: async (attempt) => void told.push(["before", attempt]),
        onRequestFailed: (failure) => void told.push(["failed", failure]),
      });
      expect(answer.content).toEqual([{ type: "text", text: "hello" }]);
      expect(told).toEqual([
        ["before", 0],
        ["failed", { attempt: 0, status: 429, retryAfterMs: 3000 }],
        ["before", 1],
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("the wait a refusal asks for", () => {
  it("reads retry-after first, else on a 429 the exhausted limit's reset", () => {
    const headers = (fields: Record<string, string>) => new Headers(fields);
    expect(
      requestedWaitMs(429, headers({ "retry-after": "2", "x-ratelimit-reset-tokens": "9s" })),
    ).toBe(2000);
    const both = { "x-ratelimit-reset-requests": "1m30s", "x-ratelimit-reset-tokens": "250ms" };
    expect(requestedWaitMs(429, headers(both))).toBe(250);
    const requestsOut = { ...both, "x-ratelimit-remaining-requests": "0" };
    expect(requestedWaitMs(429, headers(requestsOut))).toBe(90_000);
    expect(requestedWaitMs(503, headers(both))).toBeUndefined(); // resets count only on a 429
    expect(requestedWaitMs(429, headers({ "x-ratelimit-reset-tokens": "soon" }))).toBeUndefined();
  });
});

describe("the scripted model's limits", () => {
  it("answers 429 with retry-after past its requests per window, and lists the refused", async () => {
    const server = await startScriptedModelServer({
      limits: { requests: 2, windowMs: 60_000 },
      respond: () => ({ kind: "text", text: "ok" }),
    });
    try {
      const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
      const post = () =>
        fetch(`${server.baseURL}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
      const answers = [await post(), await post(), await post()];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      const retryAfter = Number(answers[2]?.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(server.limited.map((r) => r.index)).toEqual([2]);
    } finally {
      await server.close();
    }
  });
});

describe("the scripted model's token count", () => {
  it("counts tool definitions as prompt tokens when told, and records what its limits counted", async () => {
    const tools = [
      { type: "function", function: { name: "lookup", parameters: { type: "object" } } },
    ];
    const messages = [{ role: "user", content: "hi" }];
    const promptOf = async (countToolTokens: boolean) => {
      const server = await startScriptedModelServer({
        limits: { tokens: 10_000 },
        countToolTokens,
        respond: () => ({ kind: "text", text: "ok" }),
      });
      try {
        const answer = await fetch(`${server.baseURL}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages, tools }),
        });
        const { usage } = (await answer.json()) as {
          usage: { total_tokens: number; prompt_tokens: number };
        };
        expect(server.requests[0]?.limitedTokens).toBe(usage.total_tokens); // its limits count its usage
        return usage.prompt_tokens;
      } finally {
        await server.close();
      }
    };
    const messagesOnly = Math.ceil(JSON.stringify(messages).length / 4);
    expect(await promptOf(false)).toBe(messagesOnly);
    expect(await promptOf(true)).toBe(messagesOnly + Math.ceil(JSON.stringify(tools).length / 4));
  });
});

describe("YIEM_MODEL_LIMITS", () => {
  it("reads limits by model or by a group of models, and refuses a malformed one", () => {
    const limits = readModelLimits(
      '{ "gpt-4o": { "requests": 500 }, "local": { "models": ["qwen3"], "tokens": 9000, "windowMs": 10000 } }',
    );
    expect(limitOfModel(limits, "gpt-4o")).toEqual({
      name: "gpt-4o",
      requests: 500,
      tokens: 0,
      windowMs: 60_000,
      outputTokens: 0,
    });
    expect(limitOfModel(limits, "qwen3")?.name).toBe("local");
    expect(limitOfModel(limits, "other")).toBeUndefined();
    expect(readModelLimits(undefined)).toBeUndefined();
    expect(() => readModelLimits('{ "m": { "rpm": 5 } }')).toThrow(ConfigError);
    expect(() => readModelLimits('{ "m": { "requests": 0 } }')).toThrow(/requests must be/);
    expect(() => readModelLimits("[1]")).toThrow(ConfigError);
  });

  it("covers calls by server and key variable, first match first, and refuses an empty one", () => {
    const limits = readModelLimits(
      JSON.stringify({
        "openai-batch": {
          baseURL: "https://api.openai.com/v1",
          apiKeyEnv: "BATCH_KEY",
          requests: 5,
        },
        openai: { baseURL: "https://api.openai.com/v1/", tokens: 2_000_000 },
        "gpt-4o": { requests: 500 },
      }),
    );
    const openai = "https://api.openai.com/v1";
    // A server's limit covers every model on it with any key, but the first match wins.
    expect(limitOfCall(limits, { model: "gpt-4o", baseURL: openai })?.name).toBe("openai");
    expect(limitOfCall(limits, { model: "o3", baseURL: `${openai}/` })?.name).toBe("openai");
    const batch = { model: "o3", baseURL: openai, apiKeyEnv: "BATCH_KEY" };
    expect(limitOfCall(limits, batch)?.name).toBe("openai-batch");
    // Elsewhere, the limit named after the model; else none.
    expect(
      limitOfCall(limits, { model: "gpt-4o", baseURL: "http://127.0.0.1:8000/v1" })?.name,
    ).toBe("gpt-4o");
    expect(limitOfCall(limits, { model: "o3" })).toBeUndefined();
    expect(() => readModelLimits('{ "m": { "baseURL": "" } }')).toThrow(/baseURL must be/);
    expect(() => readModelLimits('{ "m": { "apiKeyEnv": 7 } }')).toThrow(/apiKeyEnv must be/);
  });
});
