import type { IncomingMessage } from "node:http";
import { DEFAULT_MAX_JSON_DEPTH, jsonTextNestsDeeperThan } from "@yiem/core";
import { GatewayError } from "./gatewayError.js";

/**
 * The request's body parsed as JSON, read up to `maxBytes`: a larger body (announced by its
 * `Content-Length` or found while reading) is refused with 413 before more is read, a body
 * that is not JSON with 400, as is one nesting objects and arrays more than
 * `DEFAULT_MAX_JSON_DEPTH` (64) levels deep (measured on the text, before parsing, so no
 * later step walks a value deep enough to overflow the stack), a body of another type than
 * JSON with 415 (a browser sends a cross-site form or `text/plain` body without asking CORS
 * first; JSON it must ask for). An empty body is `undefined`.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const announced = Number(req.headers["content-length"] ?? 0);
  if (announced > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  if (!isJsonType(req.headers["content-type"])) {
    throw new GatewayError(
      415,
      "unsupported_media_type",
      "the request body must be application/json",
    );
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (jsonTextNestsDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)) {
    throw new GatewayError(
      400,
      "invalid_json",
      `the request body nests objects and arrays more than ${DEFAULT_MAX_JSON_DEPTH} levels deep`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError(400, "invalid_json", "the request body is not JSON");
  }
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, "body_too_large", `the request body is over ${maxBytes} bytes`);
}

/** True for `application/json` and `application/<x>+json`, with any parameters. */
function isJsonType(header: string | undefined): boolean {
  const type = (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}
