import type { IncomingMessage, ServerResponse } from "node:http";
import { closeServer, createHttpServer, type HttpLimits, listenOn } from "../ops/httpListen.js";
import type { WorkerMetrics } from "./workerMetrics.js";

/** The loopback address: what a URL names when the server listens on every interface. */
const LOOPBACK_HOST = "127.0.0.1";

/** Options of `startWorkerHttp`. */
export interface WorkerHttpOptions {
  /** The port (0: any free one). */
  port: number;
  /** The address to listen on (the worker's resolved `host`). */
  host: string;
  metrics: WorkerMetrics;
  /** Facts for `/healthz` besides `status` (read at each request). */
  health: () => Record<string, unknown>;
  /** The connection cap and timeouts (`DEFAULT_HTTP_LIMITS` for each unset one). */
  limits?: HttpLimits;
}

/** A running worker HTTP side. */
export interface WorkerHttpHandle {
  url: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" }).end(body);
}

async function route(options: WorkerHttpOptions, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(res, 405, "text/plain", "method not allowed\n");
  }
  if (path === "/healthz") {
    const body = JSON.stringify({ status: "ok", ...options.health() });
    return send(res, 200, "application/json", body);
  }
  if (path === "/metrics") {
    const { registry } = options.metrics;
    return send(res, 200, registry.contentType, await registry.metrics());
  }
  send(res, 404, "text/plain", "not found\n");
}

/**
 * Serves a tool worker's `/healthz` (liveness: 200 while the process runs, with `health()`'s
 * facts) and `/metrics` (Prometheus) on `port` and `host`.
 * Read-only: it serves nothing else and never touches Redis. Slow clients are bounded by
 * `limits` (`createHttpServer`). Rejects with `PortInUseError`
 * when the port is taken, before serving anything.
 */
export async function startWorkerHttp(options: WorkerHttpOptions): Promise<WorkerHttpHandle> {
  const { host } = options;
  const server = createHttpServer((req, res) => {
    route(options, req, res).catch((err: unknown) =>
      send(res, 500, "text/plain", `${err instanceof Error ? err.message : String(err)}\n`),
    );
  }, options.limits);
  const port = await listenOn(server, options.port, host);
  const urlHost = host === "0.0.0.0" || host === "::" ? LOOPBACK_HOST : host;
  return {
    url: `http://${urlHost.includes(":") ? `[${urlHost}]` : urlHost}:${port}`,
    close: () => closeServer(server),
  };
}
