import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { notFound } from "../http/gatewayError.js";
import { defineRoute, type Route } from "../http/route.js";

/** The folder of the page's files (`apps/gateway/page/`), from `src/routes/` and `dist/routes/` alike. */
const PAGE_DIR = new URL("../../page/", import.meta.url);

/** The page's files, by the name they are served under, with their media types: nothing else is served. */
const PAGE_FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "runView.js": "text/javascript; charset=utf-8",
  "timeline.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/**
 * The page's Content-Security-Policy: scripts, styles and requests from the gateway only,
 * no inline script or style, no plugins, no framing, no form posts elsewhere.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The headers every file of the page goes out with (`docs/SECURITY.md`, "The page"). */
export const PAGE_HEADERS: Record<string, string> = {
  "Content-Security-Policy": PAGE_CSP,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-cache",
};

const cache = new Map<string, Buffer>();

/** The bytes of page file `name` (read once). */
async function readPageFile(name: string): Promise<Buffer> {
  const cached = cache.get(name);
  if (cached) return cached;
  const bytes = await readFile(new URL(name, PAGE_DIR));
  cache.set(name, bytes);
  return bytes;
}

/** Answers with page file `name` and the page's headers; 404 for a name not in `PAGE_FILES`. */
async function sendPageFile(res: ServerResponse, name: string, head: boolean): Promise<void> {
  const type = Object.hasOwn(PAGE_FILES, name) ? PAGE_FILES[name] : undefined;
  if (!type) throw notFound("page file", name);
  const bytes = await readPageFile(name);
  res.writeHead(200, {
    ...PAGE_HEADERS,
    "Content-Type": type,
    "Content-Length": String(bytes.length),
  });
  res.end(head ? undefined : bytes);
}

/** `GET /`: the page that shows runs (no key needed: it asks for one, and every call it makes is checked). */
export const pageRoute = defineRoute({
  method: "GET",
  path: "/",
  summary: "The web page that shows runs: chat, tool calls, approvals, a timeline, sessions.",
  responses: { 200: { description: "the page", mediaType: "text/html" } },
  async handle({ req, res }) {
    await sendPageFile(res, "index.html", req.method === "HEAD");
    return { kind: "streamed" };
  },
});

/** `GET /page/{file}`: the page's scripts and styles. */
export const pageFileRoute = defineRoute({
  method: "GET",
  path: "/page/{file}",
  summary: "A script or style sheet of the page.",
  responses: { 200: { description: "the file" }, 404: { description: "no such file" } },
  async handle({ req, res, params }) {
    await sendPageFile(res, params.file ?? "", req.method === "HEAD");
    return { kind: "streamed" };
  },
});

/** The page's routes (outside the OpenAPI document: they are not the API). */
export const pageRoutes = [pageRoute, pageFileRoute] as Route[];
