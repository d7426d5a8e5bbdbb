import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";

/** Whether a process takes work now; `reason` is one line when it does not. */
export type ProcessReadiness = { ready: true } | { ready: false; reason: string };

/** What the operations routes answer from, read at each request. */
export interface HealthRoutes {
  /** Facts `/healthz` shows beside `status: "ok"`. */
  health(): Record<string, unknown>;
  /** `/readyz`'s check: 200 `ready`, or 503 with its reason. */
  readiness(): ProcessReadiness | Promise<ProcessReadiness>;
  /** The Prometheus registry `/metrics` serves. */
  registry: Registry;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" }).end(body);
}

/**
 * Answers `/healthz` (liveness, 200 with `health()`'s facts), `/readyz` (200 `ready`, or 503
 * with a one-line reason) and `/metrics` (Prometheus); 405 for a method other than GET or
 * HEAD, 404 for any other path. Read-only. Rejects only when a check or the registry does
 * (the caller answers 500).
 *
 * @example createHttpServer((req, res) => void answerHealthRoutes(routes, req, res).catch(…));
 */
export async function answerHealthRoutes(
  routes: HealthRoutes,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(res, 405, "text/plain", "method not allowed\n");
  }
  if (path === "/healthz") {
    return send(res, 200, "application/json", JSON.stringify({ status: "ok", ...routes.health() }));
  }
  if (path === "/readyz") {
    const readiness = await routes.readiness();
    if (readiness.ready) return send(res, 200, "text/plain", "ready\n");
    return send(res, 503, "text/plain", `${readiness.reason}\n`);
  }
  if (path === "/metrics") {
    return send(res, 200, routes.registry.contentType, await routes.registry.metrics());
  }
  send(res, 404, "text/plain", "not found\n");
}
