import { describe, expect, it } from "vitest";
import { scriptedServer } from "./support.js";

async function post(baseURL: string, body: unknown) {
  return fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("scripted model server", () => {
  it("lists its model on GET /v1/models", async () => {
    const server = await scriptedServer({ model: "tiny" });
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await fetch(`${server.baseURL}/models`);
    expect(await response.json()).toMatchObject({ object: "list", data: [{ id: "tiny" }] });
  });

  it("answers 500 in OpenAI's error shape once the script is exhausted", async () => {
    const server = await scriptedServer();
    const response = await post(server.baseURL, { model: "m", messages: [] });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: "scripted model: script exhausted", type: "server_error", code: null },
    });
  });

  it("consumes pushed replies in order, then falls back to respond", async () => {
    const server = await scriptedServer({
      respond: ({ index }) => ({ kind: "text", text: `respond ${index}` }),
    });
    server.push({ kind: "text", text: "first" }, { kind: "text", text: "second" });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const json = (await (await post(server.baseURL, { messages: [] })).json()) as {
        choices: { message: { content: string } }[];
      };
      texts.push(json.choices[0]?.message.content ?? "");
    }
    expect(texts).toEqual(["first", "second", "respond 2"]);
    expect(server.requests.map((r) => r.index)).toEqual([0, 1, 2]);
  });

  it("streams tool call deltas with index, id and argument pieces, then usage", async () => {
    const server = await scriptedServer({
      replies: [
        {
          kind: "toolCalls",
          calls: [{ id: "c1", name: "f", arguments: { a: 123456 } }],
          argumentChunks: 3,
        },
      ],
    });
    const response = await post(server.baseURL, {
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)));
    const pieces = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(pieces).toHaveLength(3);
    expect(pieces[0]).toMatchObject({
      index: 0,
      id: "c1",
      type: "function",
      function: { name: "f" },
    });
    expect(pieces.map((p) => p.function.arguments).join("")).toBe('{"a":123456}');
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { total_tokens: expect.any(Number) },
    });
  });

  it("closes while a request hangs", async () => {
    const server = await scriptedServer({ replies: [{ kind: "hang" }] });
    const pending = post(server.baseURL, { messages: [] }).then(
      () => "answered",
      () => "failed",
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.close();
    expect(await pending).toBe("failed");
  });
});
