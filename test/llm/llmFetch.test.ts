/**
 * The `fetch` Yiem's `openai` client sends its model calls with (`createLlmFetch`, over undici's
 * `request`), against real HTTP servers on loopback: it must behave as Node's `fetch` does for
 * what the SDK sends. A streamed answer the server gzip-encoded is decoded, a redirect is
 * followed with its body, an abort in the middle of a stream ends the call and closes its
 * connection, a bodiless answer or repeated headers read as `fetch` reads them, and a
 * dispatcher set with undici's `setGlobalDispatcher` (a proxy, say) carries the calls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { createOpenAILlmCall } from "@yiem/core";
import { createLlmFetch } from "@yiem/core/internal";
import { afterEach, describe, expect, it } from "vitest";
import { request, scriptedServer } from "./support.js";

/** The one method of undici's dispatchers that its `request` calls. */
type Dispatch = (
  options: { method: string; origin: string; path: string },
  handler: unknown,
) => boolean;

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A plain HTTP server on 127.0.0.1 answering every request with `handle`; its base URL. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One server-sent chunk of a streamed chat completion carrying `content`. */
function chunk(content: string, finish: string | null = null): string {
  const delta = { role: "assistant", content };
  const choice = { index: 0, delta, finish_reason: finish };
  const body = {
    id: "c1",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [choice],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

describe("createLlmFetch: the model calls' fetch", () => {
  it("decodes a streamed answer the server sent gzip-encoded", async () => {
    const sse = `${chunk("hel")}${chunk("lo", "stop")}data: [DONE]\n\n`;
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      res.end(gzipSync(sse));
    });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: `${base}/v1`, stream: true })(
      request,
    );
    expect(answer.stopReason).toBe("stop");
    expect(answer.content).toEqual([{ type: "text", text: "hello" }]);
  });

  it("follows a redirect to the model server, the request body with it", async () => {
    const model = await scriptedServer({ replies: [{ kind: "text", text: "moved here" }] });
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${model.baseURL}/chat/completions` }).end();
    });
    const answer = await createOpenAILlmCall({ model: "m", baseURL: `${base}/v1` })(request);
    expect(answer.content).toEqual([{ type: "text", text: "moved here" }]);
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(model.requests[0]?.body.messages)).toContain("Paris and Tokyo");
  });

  it("ends a call aborted in the middle of its stream, and closes its connection", async () => {
    let closed: () => void = () => undefined;
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const base = await serve((req, res) => {
      req.socket.on("close", closed);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("partial ")); // then nothing more
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: `${base}/v1`, stream: true });
    const answer = await llmCall(request, controller.signal);
    expect(answer.stopReason).toBe("aborted");
    await connectionClosed;
  });

  it("reads a bodiless answer and repeated headers as fetch does", async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.setHeader("x-two", ["a", "b"]);
      res.writeHead(req.url === "/empty" ? 204 : 200, { "content-type": "text/plain" });
      res.end(req.url === "/empty" ? undefined : `${req.method} ${req.headers["x-sent"]}`);
    });
    const llmFetch = createLlmFetch();
    const empty = await llmFetch(`${base}/empty`, { method: "DELETE" });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const full = await llmFetch(new URL(`${base}/full`), {
      method: "post",
      headers: { "X-Sent": "yes" },
      body: "{}",
    });
    expect(full.status).toBe(200);
    expect(full.headers.get("x-two")).toBe("a, b");
    expect(await full.text()).toBe("POST yes");
  });

  it("sends through the dispatcher set with undici's setGlobalDispatcher, its query kept", async () => {
    const base = await serve((req, res) => res.end(req.url));
    // Where undici's setGlobalDispatcher puts the dispatcher, for every copy of undici and
    // Node's own fetch: a proxy set there carries the model calls too.
    const slot = globalThis as unknown as Record<symbol, { dispatch: Dispatch }>;
    const key = Symbol.for("undici.globalDispatcher.1");
    const before = slot[key] as { dispatch: Dispatch };
    const sent: string[] = [];
    slot[key] = {
      dispatch(options, handler) {
        sent.push(`${options.method} ${options.origin}${options.path}`);
        return before.dispatch(options, handler);
      },
    };
    try {
      const answer = await createLlmFetch()(`${base}/v1/models?limit=2`, { method: "GET" });
      expect(await answer.text()).toBe("/v1/models?limit=2");
    } finally {
      slot[key] = before;
    }
    expect(sent).toEqual([`GET ${base}/v1/models?limit=2`]);
  });
});
