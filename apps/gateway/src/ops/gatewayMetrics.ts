import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { SlotKind } from "../state/keySlots.js";

/** The `route` label of a request that matched no route (404, or refused before routing). */
export const UNMATCHED_ROUTE = "unmatched";

/** One answered request, as the metrics count it. */
export interface AnsweredRequest {
  method: string;
  /** The route's path template (`/v1/sessions/{id}`), or `UNMATCHED_ROUTE`. */
  route: string;
  status: number;
  /** The error code of a refusal (`rate_limited`, `too_many_streams`, …), if any. */
  code?: string;
  seconds: number;
}

/** The gateway's Prometheus metrics and the hooks that feed them. */
export interface GatewayMetrics {
  registry: Registry;
  /** Counts an answered request by method, route template and status; a 429 also by its code. */
  countRequest(request: AnsweredRequest): void;
  /** Marks a connection held open (`stream`: an event stream; `long`: a wait for an answer); returns its end. */
  openConnection(kind: SlotKind): () => void;
}

/**
 * Creates the gateway's metrics: `yiem_gateway_requests_total{method,route,status}`,
 * `yiem_gateway_request_duration_seconds{route}`, `yiem_gateway_rate_limited_total{code}`
 * (every 429: a key's request rate, its open streams, its long requests, its runs at once),
 * `yiem_gateway_open_connections{kind}` (`stream`, `long`: held open now on this gateway), and
 * prom-client's process metrics. `route` is a route's template, never a path a client sent,
 * so clients cannot grow the number of series.
 *
 * @example const metrics = createGatewayMetrics(); metrics.countRequest({ method: "GET", route: "/v1/agents", status: 200, seconds: 0.01 });
 */
export function createGatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: "yiem_gateway_requests_total",
    help: "Requests answered, by method, route template and status code",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const durations = new Histogram({
    name: "yiem_gateway_request_duration_seconds",
    help: "Time from a request's arrival to its answer's end (event streams: their whole life), by route template",
    labelNames: ["route"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const limited = new Counter({
    name: "yiem_gateway_rate_limited_total",
    help: "Requests refused with 429, by error code",
    labelNames: ["code"],
    registers: [registry],
  });
  const open = new Gauge({
    name: "yiem_gateway_open_connections",
    help: "Requests holding their connection open now on this gateway: stream (event streams), long (waits for an answer, chat faces)",
    labelNames: ["kind"],
    registers: [registry],
  });
  for (const kind of ["stream", "long"]) open.set({ kind }, 0);
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    countRequest(request) {
      const method = knownMethod(request.method);
      requests.inc({ method, route: request.route, status: String(request.status) });
      durations.observe({ route: request.route }, request.seconds);
      if (request.status === 429) limited.inc({ code: request.code ?? "unknown" });
    },
    openConnection(kind) {
      open.inc({ kind });
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        open.dec({ kind });
      };
    },
  };
}

/** The methods the gateway serves keep their name; any other is `other` (a bounded label). */
function knownMethod(method: string): string {
  return ["GET", "HEAD", "POST", "OPTIONS"].includes(method) ? method : "other";
}
