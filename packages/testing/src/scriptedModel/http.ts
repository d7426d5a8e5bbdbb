import type { IncomingMessage, ServerResponse } from "node:http";

/** Reads a request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

/** Sends a JSON body with a status and optional extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** The OpenAI error `type` for an HTTP status. */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** Sends an error in OpenAI's `{error: {message, type, code}}` shape. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const code = status === 429 ? "rate_limit_exceeded" : null;
  sendJson(res, status, { error: { message, type: errorType(status), code } }, headers);
}

/**
 * Sends chunks as Server-Sent Events (`data: {...}\n\n`), then `data: [DONE]`; with
 * `chunkDelayMs`, waits that long before each chunk after the first (stops if the client leaves).
 */
export async function sendSse(
  res: ServerResponse,
  chunks: readonly object[],
  chunkDelayMs = 0,
): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const [index, chunk] of chunks.entries()) {
    if (chunkDelayMs > 0 && index > 0) await waitOrClose(res, chunkDelayMs);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end("data: [DONE]\n\n");
}

/** Resolves after `ms`, or as soon as the response is closed (client gone). */
export function waitOrClose(res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on("close", done);
  });
}
