import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { YiemError } from "../errors/yiemError.js";
import { SETTINGS } from "../settings/catalogue.js";
import { capConnections } from "./connectionCap.js";

/**
 * The limits of an HTTP side Yiem serves (the coordinator's, a worker's, and any later one:
 * every server is made by `createHttpServer`), so slow or stalled clients cannot take it down.
 */
export interface HttpLimits {
  /**
   * Connections open at once (`YIEM_HTTP_MAX_CONNECTIONS`). Default 256, well under a
   * 1024 open-file limit. When full, a new connection replaces the oldest one with no request
   * in progress (see `capConnections`), so a liveness probe still gets in.
   */
  maxConnections?: number;
  /** How long a client may take to send a request's headers; then 408 and closed. Default 5 s. */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request; then 408 and closed. Default 10 s. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /** Requests one connection may carry before it is closed. Default 100. */
  maxRequestsPerSocket?: number;
  /** A connection silent both ways this long (a client that stopped reading) is closed. Default 30 s. */
  socketTimeoutMs?: number;
}

/** The limits every HTTP side has unless told otherwise. */
export const DEFAULT_HTTP_LIMITS: Readonly<Required<HttpLimits>> = Object.freeze({
  maxConnections: SETTINGS.httpMaxConnections.default,
  headersTimeoutMs: 5000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5000,
  maxRequestsPerSocket: 100,
  socketTimeoutMs: 30_000,
});

/**
 * How often the server looks for connections past their header or request timeout (Node's
 * default, 30 s, would let a stalled client stay up to 30 s past its timeout).
 */
const TIMEOUT_CHECK_MS = 1000;

/**
 * An HTTP server for `handler` with `limits` (each unset one from `DEFAULT_HTTP_LIMITS`):
 * a connection cap that sheds the oldest idle connection first, header and request timeouts
 * enforced within a second, a keep-alive timeout, a request count per connection and an
 * idle-socket timeout. Not listening yet: see `listenOn`.
 */
export function createHttpServer(handler: RequestListener, limits: HttpLimits = {}): Server {
  const settings = { ...DEFAULT_HTTP_LIMITS, ...definedOnly(limits) };
  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: Math.max(settings.requestTimeoutMs, settings.headersTimeoutMs),
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  server.maxRequestsPerSocket = settings.maxRequestsPerSocket;
  server.setTimeout(settings.socketTimeoutMs); // no 'timeout' listener: the socket is destroyed
  capConnections(server, settings.maxConnections);
  return server;
}

/** `limits` without its `undefined` entries (so they do not hide the defaults). */
function definedOnly(limits: HttpLimits): HttpLimits {
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
}

/**
 * Thrown when an HTTP side cannot listen because its port is taken. The message reads
 * `port 3000 is in use`; a process adds the variable that chose the port (`(PORT)`). Terminal.
 */
export class PortInUseError extends YiemError {
  override name = "PortInUseError";
  constructor(readonly port: number) {
    super(`port ${port} is in use`);
  }
}

/**
 * Makes `server` listen on `port` and `host` and resolves with the port it got (the real
 * one when `port` is 0). Rejects with `PortInUseError` when the port is taken and with the
 * listen error otherwise; never resolves without a bound address (Express 5's `listen`
 * callback also fires on errors, so it is not used).
 */
export function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      reject(err.code === "EADDRINUSE" ? new PortInUseError(port) : err);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

/** Closes `server` and every connection it holds (keep-alive ones included); never rejects. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * The one-line reason a process failed to start: `port 3000 is in use (PORT)` for a taken
 * port, naming `portVariable` (the setting that chose it), else the error's message.
 */
export function describeStartFailure(err: unknown, portVariable: string): string {
  if (err instanceof PortInUseError) return `${err.message} (${portVariable})`;
  return err instanceof Error ? err.message : String(err);
}
