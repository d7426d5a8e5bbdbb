import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { AgentToolResult, PartialResultCallback } from "@yiem/core";
import { type LocalHttpServer, startLocalHttpServer } from "@yiem/testing";
import { createHttpFetchTool, type HttpFetchProgress, isTextual } from "@yiem/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinTool } from "./builtinTool.js";

const { prepareArguments, validateRequiredArgs } = builtinTool("httpFetch");
/** httpFetch as a process with `YIEM_HTTP_FETCH_ALLOW=127.0.0.1/32` has it: the test site is on loopback. */
const executeTool = createHttpFetchTool({ allow: ["127.0.0.1/32"] }).execute;

const noProgress = (): void => {};

/** Writes `count` chunks of `size` bytes, `delayMs` apart, then ends (unless the client left). */
async function streamChunks(res: ServerResponse, count: number, size: number, delayMs: number) {
  res.writeHead(200, { "content-type": "text/plain", "content-length": String(count * size) });
  for (let i = 0; i < count && !res.destroyed; i++) {
    res.write("x".repeat(size));
    await sleep(delayMs);
  }
  res.end();
}

/** The routes of the test site. */
async function site(req: IncomingMessage, res: ServerResponse): Promise<void> {
  switch (req.url) {
    case "/hello":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return void res.end("<h1>héllo</h1>");
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" });
      return void res.end("no such page");
    case "/big":
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end("a".repeat(10_000));
    case "/exact":
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end('{"ok":true}');
    case "/accents":
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return void res.end("ééé");
    case "/image":
      res.writeHead(200, { "content-type": "image/png" });
      return void res.end(Buffer.alloc(256, 7));
    case "/slow-stream":
      return streamChunks(res, 5, 1000, 150);
    case "/fast-stream":
      return streamChunks(res, 40, 100, 10);
    case "/stall":
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first chunk");
      return; // never ends
    default:
      return; // never answers
  }
}

/** The text block of a result. */
function textOf(result: AgentToolResult): string {
  return (result.content[0] as { text: string }).text;
}

describe("httpFetch against a local server (lifecycle §17 tool-file contract)", () => {
  let server: LocalHttpServer;
  beforeAll(async () => {
    server = await startLocalHttpServer(site);
  });
  afterAll(() => server.close());

  const fetchTool = (
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onPartial: PartialResultCallback = noProgress,
  ) => executeTool("call-1", args, signal, onPartial);

  it("httpFetch returns the status line, content type and text of a page", async () => {
    const result = await fetchTool({ url: `${server.url}/hello` });
    expect(textOf(result)).toBe(
      "HTTP 200 OK\nContent-Type: text/html; charset=utf-8\n\n<h1>héllo</h1>",
    );
    expect(result.details).toMatchObject({
      url: `${server.url}/hello`,
      status: 200,
      contentType: "text/html; charset=utf-8",
      bytes: Buffer.byteLength("<h1>héllo</h1>"),
      truncated: false,
    });
    expect(typeof result.details.durationMs).toBe("number");
  });

  it("httpFetch returns a 404 page as a result, not an error", async () => {
    const result = await fetchTool({ url: `${server.url}/missing` });
    expect(textOf(result)).toBe("HTTP 404 Not Found\nContent-Type: text/plain\n\nno such page");
    expect(result.details.status).toBe(404);
  });

  it("httpFetch stops at maxBytes and says the body was truncated", async () => {
    const result = await fetchTool({ url: `${server.url}/big`, maxBytes: 100 });
    expect(textOf(result)).toBe(
      `HTTP 200 OK\nContent-Type: text/plain\n[truncated: showing the first 100 bytes]\n\n${"a".repeat(100)}`,
    );
    expect(result.details).toMatchObject({ bytes: 100, truncated: true });
  });

  it("httpFetch does not call a body of exactly maxBytes truncated", async () => {
    const result = await fetchTool({ url: `${server.url}/exact`, maxBytes: 11 });
    expect(result.details).toMatchObject({ bytes: 11, truncated: false });
    expect(textOf(result).endsWith('\n\n{"ok":true}')).toBe(true);
  });

  it("httpFetch drops a character cut in half by maxBytes", async () => {
    const result = await fetchTool({ url: `${server.url}/accents`, maxBytes: 5 });
    expect(textOf(result).endsWith("\n\néé")).toBe(true);
  });

  it("httpFetch describes binary content by size and type", async () => {
    const result = await fetchTool({ url: `${server.url}/image` });
    expect(textOf(result)).toBe("HTTP 200 OK\nContent-Type: image/png\n\n<256 bytes of image/png>");
  });

  it("httpFetch reports progress partial results while the body streams in", async () => {
    const progress: HttpFetchProgress[] = [];
    const onPartial = (p: unknown) => progress.push(p as HttpFetchProgress);
    const result = await fetchTool({ url: `${server.url}/slow-stream` }, undefined, onPartial);
    expect(result.details.bytes).toBe(5000);
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toEqual({ receivedBytes: 5000, totalBytes: 5000 });
    const received = progress.map((p) => p.receivedBytes);
    expect(received).toEqual([...received].sort((a, b) => a - b));
    expect(received[0]).toBeLessThan(5000);
  });

  it("httpFetch throttles progress to one report per 100 ms plus a final one", async () => {
    const progress: Array<{ at: number; p: HttpFetchProgress }> = [];
    const onPartial = (p: unknown) =>
      progress.push({ at: performance.now(), p: p as HttpFetchProgress });
    const started = performance.now();
    await fetchTool({ url: `${server.url}/fast-stream` }, undefined, onPartial);
    const elapsed = performance.now() - started;
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    const throttled = progress.slice(0, -1);
    // Read here a little after the tool read its clock (more on a loaded machine): 10 ms of slack.
    for (let i = 1; i < throttled.length; i++) {
      expect(throttled[i]!.at - throttled[i - 1]!.at).toBeGreaterThanOrEqual(90);
    }
    expect(progress.at(-1)?.p.receivedBytes).toBe(4000);
  });

  it("httpFetch times out on a server that never answers", async () => {
    await expect(fetchTool({ url: `${server.url}/never`, timeoutMs: 150 })).rejects.toThrow(
      "httpFetch timed out after 150 ms",
    );
  });

  it("httpFetch times out on a body that stalls", async () => {
    await expect(fetchTool({ url: `${server.url}/stall`, timeoutMs: 200 })).rejects.toThrow(
      "httpFetch timed out after 200 ms",
    );
  });

  it("httpFetch stops when the call's signal aborts mid-body", async () => {
    const controller = new AbortController();
    const onPartial = () => controller.abort();
    await expect(
      fetchTool({ url: `${server.url}/stall` }, controller.signal, onPartial),
    ).rejects.toThrow("httpFetch aborted");
  });

  it("httpFetch does not start with a signal that already aborted", async () => {
    await expect(fetchTool({ url: `${server.url}/hello` }, AbortSignal.abort())).rejects.toThrow(
      "httpFetch aborted",
    );
  });

  it("httpFetch reports a server it cannot reach", async () => {
    const gone = await startLocalHttpServer((_req, res) => res.end());
    await gone.close();
    await expect(fetchTool({ url: `${gone.url}/` })).rejects.toThrow(
      `httpFetch failed for ${gone.url}/: connect ECONNREFUSED`,
    );
  });

  it("httpFetch rejects non-http URLs in validation and in execution", async () => {
    for (const url of ["ftp://example.com/file", "file:///etc/passwd"]) {
      expect(validateRequiredArgs({ url })).toMatch(/only fetches http:\/\/ and https:\/\/ URLs/);
      await expect(fetchTool({ url })).rejects.toThrow(/only fetches http:\/\/ and https:\/\//);
    }
    expect(validateRequiredArgs({ url: "not a url" })).toMatch(/"url" is not an absolute URL/);
  });

  it("httpFetch checks maxBytes and timeoutMs bounds and accepts numeric strings", () => {
    const url = "https://example.com/";
    expect(validateRequiredArgs({ url, maxBytes: 0 })).toMatch(/"maxBytes" must be an integer/);
    expect(validateRequiredArgs({ url, timeoutMs: 120_001 })).toMatch(/"timeoutMs"/);
    const prepared = prepareArguments({ url: ` ${url} `, maxBytes: "2048", timeoutMs: "500" });
    expect(prepared).toEqual({ url, maxBytes: 2048, timeoutMs: 500 });
    expect(validateRequiredArgs(prepared)).toBeUndefined();
  });

  it("isTextual recognises text, JSON, XML and JavaScript content types", () => {
    for (const type of ["text/plain", "application/json; charset=utf-8", "image/svg+xml"]) {
      expect(isTextual(type)).toBe(true);
    }
    expect(isTextual("application/javascript")).toBe(true);
    expect(isTextual("image/png")).toBe(false);
    expect(isTextual("application/octet-stream")).toBe(false);
  });
});
