import { answerHealthRoutes, type ProcessReadiness } from "../ops/healthRoutes.js";
import { closeServer, createHttpServer, type HttpLimits, listenOn } from "../ops/httpListen.js";
import type { WorkerMetrics } from "./workerMetrics.js";

/** The loopback address: what a URL names when the server listens on every interface. */
const LOOPBACK_HOST = "127.0.0.1";

/** Whether a worker takes calls now; `reason` is one line when it does not. */
export type WorkerReadiness = ProcessReadiness;

/** Options of `startWorkerHttp`. */
export interface WorkerHttpOptions {
  /** The port (0: any free one). */
  port: number;
  /** The address to listen on (the worker's resolved `host`). */
  host: string;
  metrics: WorkerMetrics;
  /** Facts for `/healthz` besides `status` (read at each request). */
  health: () => Record<string, unknown>;
  /** `/readyz`: ready once its tools are loaded and it consumes its queues (read at each request). */
  readiness: () => WorkerReadiness;
  /** The connection cap and timeouts (`DEFAULT_HTTP_LIMITS` for each unset one). */
  limits?: HttpLimits;
}

/** A running worker HTTP side. */
export interface WorkerHttpHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a tool worker's `/healthz` (liveness: 200 while the process runs, with `health()`'s
 * facts), `/readyz` (200 `ready` once it consumes its queues with its tools loaded and Redis
 * reachable; 503 with a one-line reason while starting, draining or cut off from Redis) and
 * `/metrics` (Prometheus) on `port` and `host`.
 * Read-only: it serves nothing else and never touches Redis. Slow clients are bounded by
 * `limits` (`createHttpServer`). Rejects with `PortInUseError`
 * when the port is taken, before serving anything.
 */
export async function startWorkerHttp(options: WorkerHttpOptions): Promise<WorkerHttpHandle> {
  const { host } = options;
  const server = createHttpServer((req, res) => {
    const { health, readiness, metrics } = options;
    answerHealthRoutes({ health, readiness, registry: metrics.registry }, req, res).catch(
      (err: unknown) =>
        res
          .writeHead(500, { "Content-Type": "text/plain" })
          .end(`${err instanceof Error ? err.message : String(err)}\n`),
    );
  }, options.limits);
  const port = await listenOn(server, options.port, host);
  const urlHost = host === "0.0.0.0" || host === "::" ? LOOPBACK_HOST : host;
  return {
    url: `http://${urlHost.includes(":") ? `[${urlHost}]` : urlHost}:${port}`,
    close: () => closeServer(server),
  };
}
