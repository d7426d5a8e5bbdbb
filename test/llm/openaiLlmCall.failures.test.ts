import { createOpenAILlmCall } from "@yiem/core";
import { startScriptedModelServer } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { fastRetries, request, scriptedServer } from "./support.js";

const SECRET = "sk-test-secret-0123456789";

describe("lifecycle §5 llmCall over HTTP: createOpenAILlmCall failures", () => {
  it("returns HTTP 400 as an error with the status and message, without retrying", async () => {
    const server = await scriptedServer({
      replies: [{ kind: "httpError", status: 400, message: "model 'x' does not exist" }],
    });
    const llmCall = createOpenAILlmCall({ model: "x", baseURL: server.baseURL, ...fastRetries });
    const answer = await llmCall(request);
    expect(answer).toMatchObject({ role: "assistant", content: [], stopReason: "error" });
    expect(answer.errorMessage).toBe("400 model 'x' does not exist");
    expect(server.requests).toHaveLength(1);
  });

  it.each([401, 403, 404, 422])("never retries HTTP %i", async (status) => {
    const server = await scriptedServer({
      replies: [{ kind: "httpError", status, message: "no" }],
    });
    const answer = await createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      ...fastRetries,
    })(request);
    expect(answer.errorMessage).toBe(`${status} no`);
    expect(server.requests).toHaveLength(1);
  });

  it("retries HTTP 500 and returns the answer that follows", async () => {
    const server = await scriptedServer({
      replies: [
        { kind: "httpError", status: 500, message: "overloaded" },
        { kind: "text", text: "recovered" },
      ],
    });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, ...fastRetries });
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("stop");
    expect(answer.content).toEqual([{ type: "text", text: "recovered" }]);
    expect(server.requests).toHaveLength(2);
  });

  it.each([408, 409, 502, 503])("retries HTTP %i", async (status) => {
    const server = await scriptedServer({
      replies: [
        { kind: "httpError", status, message: "again" },
        { kind: "text", text: "ok" },
      ],
    });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, ...fastRetries });
    expect((await llmCall(request)).stopReason).toBe("stop");
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after maxRetries + 1 requests when the server keeps failing", async () => {
    const server = await scriptedServer({
      respond: () => ({ kind: "httpError", status: 500, message: "still down" }),
    });
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      maxRetries: 2,
      ...fastRetries,
    });
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("error");
    expect(answer.errorMessage).toBe("500 still down");
    expect(server.requests).toHaveLength(3);
  });

  it("answers 500 script exhausted once the script is used up", async () => {
    const server = await scriptedServer();
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      maxRetries: 0,
      stream: true,
    });
    const answer = await llmCall(request);
    expect(answer.errorMessage).toBe("500 scripted model: script exhausted");
    expect(server.requests).toHaveLength(1);
  });

  it("caps a 429 retry-after by maxRetryDelayMs", async () => {
    const server = await scriptedServer({
      replies: [
        { kind: "httpError", status: 429, message: "slow down", retryAfterSeconds: 60 },
        { kind: "text", text: "ok" },
      ],
    });
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      maxRetryDelayMs: 50,
    });
    const started = Date.now();
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("stop");
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("honours a short retry-after", async () => {
    const server = await scriptedServer({
      replies: [
        { kind: "httpError", status: 429, message: "slow down", retryAfterSeconds: 0.3 },
        { kind: "text", text: "ok" },
      ],
    });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL });
    const started = Date.now();
    expect((await llmCall(request)).stopReason).toBe("stop");
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(server.requests).toHaveLength(2);
  });

  it.each([false, true])("aborts a hanging request promptly (stream: %s)", async (stream) => {
    const server = await scriptedServer({ replies: [{ kind: "hang" }] });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, stream });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const answer = await llmCall(request, controller.signal);
    expect(answer).toMatchObject({
      content: [],
      stopReason: "aborted",
      errorMessage: "Request aborted",
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it("aborts during a retry wait without another request", async () => {
    const server = await scriptedServer({
      replies: [{ kind: "httpError", status: 503, message: "busy", retryAfterSeconds: 30 }],
    });
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      maxRetryDelayMs: 60_000,
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const answer = await llmCall(request, controller.signal);
    expect(answer.stopReason).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it("makes no request when the signal is already aborted", async () => {
    const server = await scriptedServer({ replies: [{ kind: "text", text: "ok" }] });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL })(
      request,
      AbortSignal.abort(),
    );
    expect(answer.stopReason).toBe("aborted");
    expect(server.requests).toHaveLength(0);
  });

  it.each([false, true])(
    "turns a malformed body into an error without retrying (stream: %s)",
    async (stream) => {
      const server = await scriptedServer({ replies: [{ kind: "malformed", body: "{not json" }] });
      const llmCall = createOpenAILlmCall({
        model: "m",
        baseURL: server.baseURL,
        stream,
        ...fastRetries,
      });
      const answer = await llmCall(request);
      expect(answer.stopReason).toBe("error");
      expect(answer.errorMessage).toMatch(/^Malformed response from the model server/);
      expect(server.requests).toHaveLength(1);
    },
  );

  it("turns a JSON body without choices into an error", async () => {
    const server = await scriptedServer({ replies: [{ kind: "malformed", body: '{"ok":true}' }] });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: server.baseURL })(request);
    expect(answer.stopReason).toBe("error");
    expect(answer.errorMessage).toContain("no choices[0].message");
  });

  it("retries connection errors, then reports them", async () => {
    const gone = await startScriptedModelServer();
    await gone.close();
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: gone.baseURL,
      maxRetries: 1,
      ...fastRetries,
    });
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("error");
    expect(answer.errorMessage).toMatch(/^Connection error/);
  });
});

describe("lifecycle §5 llmCall over HTTP: createOpenAILlmCall secrets", () => {
  it("sends the API key as a Bearer token", async () => {
    const server = await scriptedServer({ replies: [{ kind: "text", text: "ok" }] });
    await createOpenAILlmCall({ model: "m", baseURL: server.baseURL, apiKey: SECRET })(request);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it("never puts the API key in errorMessage, even when the server echoes it", async () => {
    const server = await scriptedServer({
      respond: ({ headers }) => ({
        kind: "httpError",
        status: 401,
        message: `Incorrect API key provided: ${SECRET}. Header was ${headers.authorization}`,
      }),
    });
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL, apiKey: SECRET });
    const answer = await llmCall(request);
    expect(answer.stopReason).toBe("error");
    expect(answer.errorMessage).toMatch(/^401 Incorrect API key provided: \[redacted\]/);
    expect(answer.errorMessage).not.toContain(SECRET);
    expect(server.requests).toHaveLength(1);
  });
});
