import {
  answerHealthRoutes,
  closeServer,
  createHttpServer,
  type HttpLimits,
  listenOn,
} from "@yiem/core";
import type { GatewayMetrics } from "./gatewayMetrics.js";
import type { GatewayReadiness } from "./gatewayReadiness.js";

/** Options of `startOpsServer`. */
export interface OpsServerOptions {
  port: number;
  host: string;
  metrics: GatewayMetrics;
  /** `/readyz`'s check (see `checkGatewayReadiness`). */
  readiness: () => Promise<GatewayReadiness>;
  /** Facts `/healthz` shows beside `status`. */
  health: () => Record<string, unknown>;
  limits?: HttpLimits;
}

/** A running operations server. */
export interface OpsServerHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the gateway's operations side on a port of its own, apart from the API (as the
 * coordinator's admin port and the worker's `WORKER_PORT`): `/healthz` (liveness: 200 while
 * the process runs), `/readyz` (200 `ready`, or 503 with a one-line reason) and `/metrics`
 * (Prometheus), without a key: they carry no secret, and the port is not the one end users
 * reach. Read-only. Rejects with `PortInUseError` when the port is taken.
 *
 * @example const ops = await startOpsServer({ port: 9464, host: "0.0.0.0", metrics, readiness, health: () => ({}) });
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServerHandle> {
  const server = createHttpServer((req, res) => {
    const { health, readiness, metrics } = options;
    answerHealthRoutes({ health, readiness, registry: metrics.registry }, req, res).catch(() =>
      res.writeHead(500, { "Content-Type": "text/plain" }).end("internal error\n"),
    );
  }, options.limits);
  const port = await listenOn(server, options.port, options.host);
  const shown = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    url: `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`,
    close: () => closeServer(server),
  };
}
