import type { ServerResponse } from "node:http";
import type { GatewayError } from "./gatewayError.js";

/** Answers with `body` as JSON and `status`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    ...headers,
  });
  res.end(text);
}

/** Answers with the error's status and `{ error: { code, message, field? } }`. */
export function sendError(res: ServerResponse, err: GatewayError): void {
  const error = {
    code: err.code,
    message: err.message,
    ...(err.field ? { field: err.field } : {}),
  };
  sendJson(res, err.status, { error }, err.headers);
}
