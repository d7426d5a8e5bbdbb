import type { IncomingMessage, ServerResponse } from "node:http";
import { hashApiKey, InvalidCoordinatorJobError, RedisUnavailableError } from "@yiem/core";
import type { z } from "zod";
import type { KeyRing } from "../keys/authenticate.js";
import { type GatewayKey, hasScope } from "../keys/gatewayKey.js";
import { type GatewayMetrics, UNMATCHED_ROUTE } from "../ops/gatewayMetrics.js";
import { countRequest } from "../state/keyLimits.js";
import { applyCors } from "./cors.js";
import { GatewayError, notFound } from "./gatewayError.js";
import { readJsonBody } from "./readJsonBody.js";
import type { GatewayServices, Route } from "./route.js";
import { sendError, sendJson } from "./sendJson.js";

/** What the dispatcher needs besides the routes. */
export interface DispatchOptions {
  services: GatewayServices;
  keyRing: KeyRing;
  corsOrigins: readonly string[];
  maxBodyBytes: number;
  /**
   * True without a keys file (every request is the local key): requests must name a loopback
   * `Host` and come from no other web origin than those of `corsOrigins`, so a page elsewhere
   * (or a DNS name rebound to 127.0.0.1) cannot act as the local key through a browser.
   */
  localOnly: boolean;
  /** Counts each answered request and the connections held open (`/metrics`). */
  metrics?: GatewayMetrics;
}

/** A route with its path as a pattern. */
interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

/**
 * The request handler of the gateway: CORS, then the route of the method and path (404 /
 * 405), the key (401), its request rate (429), its scope (403), the body (413, 400) and query
 * (400) checked against the route's schemas, the key's slot for a request that holds its
 * connection (429, `Route.holds`), then the route. Every failure answers
 * `{ error: { code, message, field? } }` without a stack; each request is logged with the
 * key's name, never the key.
 */
export function createDispatcher(routes: readonly Route[], options: DispatchOptions) {
  const compiled = routes.map(compileRoute);
  const { log } = options.services;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = Date.now();
    let keyName: string | undefined;
    let matched: Route | undefined;
    const handled = (async () => {
      if (options.localOnly) refuseBrowsersElsewhere(req, options.corsOrigins);
      if (applyCors(req, res, options.corsOrigins)) return;
      const url = new URL(req.url ?? "/", "http://gateway.invalid");
      const { route, params } = findRoute(compiled, req.method ?? "GET", url.pathname);
      matched = route;
      const key = route.scope ? await admit(options, req, route, url, params) : undefined;
      keyName = key?.name;
      const body = route.body
        ? validate(route.body, await readJsonBody(req, options.maxBodyBytes), "")
        : undefined;
      const query = route.query
        ? validate(route.query, Object.fromEntries(url.searchParams), "")
        : undefined;
      const holds = key ? route.holds?.(query) : undefined;
      const release = holds ? options.services.slots.take(key as GatewayKey, holds) : undefined;
      const closed = holds ? options.metrics?.openConnection(holds) : undefined;
      try {
        const reply = await route.handle({
          req,
          res,
          key: key as GatewayKey,
          params,
          query,
          body,
          services: options.services,
        });
        if (reply.kind === "json") sendJson(res, reply.status, reply.body, reply.headers);
      } finally {
        closed?.();
        release?.();
      }
    })();
    let code: string | undefined;
    handled
      .catch((err: unknown) => {
        code = answerFailure(res, err, options.services, matched);
      })
      .finally(() => {
        options.metrics?.countRequest({
          method: req.method ?? "GET",
          route: matched?.path ?? UNMATCHED_ROUTE,
          status: res.statusCode,
          code,
          seconds: (Date.now() - started) / 1000,
        });
        log.info(
          {
            key: keyName,
            method: req.method,
            path: pathOnly(req.url),
            status: res.statusCode,
            ms: Date.now() - started,
          },
          "request",
        );
      });
  };
}

/** The request's key, once its rate and the route's scope allow it. */
async function admit(
  options: DispatchOptions,
  req: IncomingMessage,
  route: Route,
  url: URL,
  params: Record<string, string>,
): Promise<GatewayKey> {
  const token = route.acceptsStreamToken ? url.searchParams.get("token") : null;
  const key =
    token && !req.headers.authorization
      ? await keyOfStreamToken(options, token, params.id ?? "")
      : options.keyRing.authenticate(req);
  const verdict = await countRequest(options.services.store, key);
  if (verdict.kind === "limited") {
    throw new GatewayError(
      429,
      "rate_limited",
      `this key made more than ${key.requestsPerMinute} requests this minute`,
      undefined,
      { "Retry-After": String(verdict.retryAfterS) },
    );
  }
  if (route.scope && !hasScope(key, route.scope)) {
    throw new GatewayError(403, "forbidden", `this key lacks the "${route.scope}" scope`);
  }
  return key;
}

/**
 * The key of an event-stream token, which opens the events of its one session: an unknown or
 * expired token, one of a key no longer in the keys file, or one made before its key was
 * rotated (the name now has another hash; a record of a version that stored no hash counts as
 * such) gets 401; a token of another session gets that session's 404.
 */
async function keyOfStreamToken(
  options: DispatchOptions,
  token: string,
  sessionId: string,
): Promise<GatewayKey> {
  const record = await options.services.store.readStreamToken(hashApiKey(token));
  const key = record ? options.keyRing.byName(record.keyName) : undefined;
  if (!record || !key || key.hash !== record.keyHash)
    throw new GatewayError(401, "unauthorized", "unknown or expired stream token");
  if (record.sessionId !== sessionId) throw notFound("session", sessionId);
  return key;
}

/** Throws 403 for a request with a non-loopback `Host`, or from a web origin not listed. */
function refuseBrowsersElsewhere(req: IncomingMessage, corsOrigins: readonly string[]): void {
  const host = (req.headers.host ?? "").replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  const origin = req.headers.origin;
  if (!isLoopbackName(host)) {
    throw new GatewayError(
      403,
      "forbidden",
      "without a keys file the gateway answers loopback names only",
    );
  }
  if (origin !== undefined && !corsOrigins.includes(origin) && !isLoopbackOrigin(origin)) {
    throw new GatewayError(
      403,
      "forbidden",
      `without a keys file the gateway refuses origin ${origin}`,
    );
  }
}

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    return isLoopbackName(new URL(origin).hostname.replace(/^\[(.*)\]$/, "$1"));
  } catch {
    return false;
  }
}

/** `value` parsed by `schema`, or a 400 naming the first field at fault. */
function validate<T>(schema: z.ZodType<T>, value: unknown, prefix: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".");
  const message = `${field || "body"}: ${issue?.message ?? "invalid"}`;
  throw new GatewayError(400, "invalid_request", message, field || undefined);
}

function compileRoute(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
    .replace(/\\?\{(\w+)\\?\}/g, (_, name: string) => {
      names.push(name);
      return "([^/]+)";
    });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** The route of `method` and `path` with its parameters; 404 for no path, 405 for another method. */
function findRoute(
  routes: CompiledRoute[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } {
  let pathKnown = false;
  for (const { route, pattern, names } of routes) {
    const match = pattern.exec(path);
    if (!match) continue;
    pathKnown = true;
    if (route.method !== method && !(method === "HEAD" && route.method === "GET")) continue;
    const params = Object.fromEntries(
      names.map((name, i) => [name, decodeParam(match[i + 1] ?? "")]),
    );
    return { route, params };
  }
  if (pathKnown)
    throw new GatewayError(405, "method_not_allowed", `${method} is not allowed on ${path}`);
  throw new GatewayError(404, "not_found", `no endpoint ${path}`);
}

function decodeParam(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new GatewayError(
      400,
      "invalid_request",
      "a path parameter is not valid percent-encoding",
    );
  }
}

/**
 * Answers a failure: its own status for a `GatewayError`, 400 for a refused input, 503 without
 * Redis, else 500; in the route's own error shape when it has one (`Route.errorBody`).
 * Returns the answer's error code (none when the response had begun: it is cut instead).
 */
function answerFailure(
  res: ServerResponse,
  err: unknown,
  services: GatewayServices,
  route: Route | undefined,
): string | undefined {
  if (res.headersSent) {
    res.destroy();
    return undefined;
  }
  const failure = toGatewayError(err, services);
  if (route?.errorBody) sendJson(res, failure.status, route.errorBody(failure), failure.headers);
  else sendError(res, failure);
  return failure.code;
}

/**
 * The answer a failure gets (logged when it is not the client's doing): a `GatewayError` as
 * it is, a refused job input 400, Redis away 503, anything else 500 `internal`.
 */
export function toGatewayError(err: unknown, services: GatewayServices): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof InvalidCoordinatorJobError) {
    return new GatewayError(400, "invalid_request", err.message, err.field);
  }
  if (err instanceof RedisUnavailableError) {
    services.log.warn({ err: err.message }, "Redis unavailable");
    const retry = { "Retry-After": "1" };
    return new GatewayError(
      503,
      "unavailable",
      "the cluster is unavailable; retry later",
      undefined,
      retry,
    );
  }
  services.log.error({ err: err instanceof Error ? err.message : String(err) }, "request failed");
  return new GatewayError(500, "internal", "internal error");
}

/** The path of a request URL without its query (which may carry ids a log need not keep). */
function pathOnly(url: string | undefined): string {
  return (url ?? "/").split("?")[0] ?? "/";
}
