import { createHash, timingSafeEqual } from "node:crypto";
import type { Queue } from "bullmq";
import type { Express, NextFunction, Request, RequestHandler, Response } from "express";
import { closeServer, createHttpServer, type HttpLimits, listenOn } from "../../ops/httpListen.js";
import { ConfigError } from "../../settings/configError.js";
import type { CoordinatorMetrics } from "./coordinatorMetrics.js";
import { startFrontDoor } from "./frontDoor.js";
import type { Readiness } from "./readiness.js";

/** Options of `startAdminServer`. */
export interface AdminServerOptions {
  port: number;
  /** The address to listen on; default `chooseAdminHost` (loopback without auth). */
  host?: string;
  /** The queues to show (read each time, so queues created later appear). */
  queues: () => Queue[];
  metrics: CoordinatorMetrics;
  /** Extra facts for `/healthz`. */
  health: () => Record<string, unknown>;
  /** `/readyz`: whether the coordinator can take work (it answers within its own deadline). */
  readiness: () => Promise<Readiness>;
  /** Basic auth for Bull Board: set both or neither (one alone is refused). */
  adminUser?: string;
  adminPassword?: string;
  /** Bull Board without retry, remove or clean buttons. */
  readOnly?: boolean;
  /** The connection cap and timeouts (`DEFAULT_HTTP_LIMITS` for each unset one). */
  limits?: HttpLimits;
  /**
   * Serve the port from a front door thread (`startFrontDoor`: `/healthz` answered there,
   * everything else passed to this thread's app on a loopback port). `false` serves it from
   * this thread alone. @defaultValue true
   */
  frontDoor?: boolean;
  /** `/healthz` fails once this thread's event loop has been silent this long. @defaultValue `YIEM_HEALTH_STALL_MS`'s */
  healthStallMs?: number;
}

/** A running admin server. */
export interface AdminServerHandle {
  url: string;
  close(): Promise<void>;
}

/** Bull Board's basic auth credentials, both set. */
export interface AdminCredentials {
  user: string;
  password: string;
}

/**
 * Thrown when Bull Board's credentials are half set (a user without a password or the
 * reverse) or unusable; the message names `YIEM_ADMIN_USER` and `YIEM_ADMIN_PASSWORD`.
 * A `ConfigError`, so every start-failure path that reports configuration errors reports it.
 */
export class AdminCredentialsError extends ConfigError {
  override name = "AdminCredentialsError";
}

/** Where the admin server listens without auth: this host only. */
const LOOPBACK_HOST = "127.0.0.1";
/** Where it listens with auth (as before): every interface. */
const ALL_INTERFACES = "0.0.0.0";

/**
 * Checks Bull Board's credentials: returns them when both are set, `undefined` when neither
 * is (empty strings count as unset). Throws `AdminCredentialsError` naming both variables
 * when only one is set, or when the user contains ":" (basic auth could never match it).
 * Never logs or echoes a credential.
 */
export function checkAdminCredentials(
  user: string | undefined,
  password: string | undefined,
): AdminCredentials | undefined {
  if (!user && !password) return undefined;
  if (!user || !password) {
    const set = user ? "YIEM_ADMIN_USER" : "YIEM_ADMIN_PASSWORD";
    throw new AdminCredentialsError(
      `YIEM_ADMIN_USER and YIEM_ADMIN_PASSWORD must be set together: only ${set} is set, ` +
        "which would leave Bull Board open. Set both for basic auth, or neither " +
        `(Bull Board then listens on ${LOOPBACK_HOST} only unless YIEM_ADMIN_HOST says otherwise)`,
    );
  }
  if (user.includes(":")) {
    throw new AdminCredentialsError(
      "YIEM_ADMIN_USER must not contain ':' (basic auth splits user and password there); " +
        "YIEM_ADMIN_PASSWORD may",
    );
  }
  return { user, password };
}

/**
 * The address the admin server listens on: `host` when given, else every interface with
 * credentials and `127.0.0.1` without. Never checks that the address exists.
 */
export function chooseAdminHost(host: string | undefined, credentials: boolean): string {
  if (host) return host;
  return credentials ? ALL_INTERFACES : LOOPBACK_HOST;
}

/** The SHA-256 digest of a text, so secrets of any length compare as equal-length buffers. */
function digestOf(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The user and password of a `Basic` authorization header, or `undefined` when malformed. */
function readBasicCredentials(header: string | undefined): AdminCredentials | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Compares the given credentials with the expected digests in constant time (both always). */
function matchesCredentials(given: AdminCredentials, user: Buffer, password: Buffer): boolean {
  const userMatches = timingSafeEqual(digestOf(given.user), user);
  const passwordMatches = timingSafeEqual(digestOf(given.password), password);
  return userMatches && passwordMatches;
}

function basicAuth(credentials: AdminCredentials) {
  const user = digestOf(credentials.user);
  const password = digestOf(credentials.password);
  return (req: Request, res: Response, next: NextFunction) => {
    const given = readBasicCredentials(req.headers.authorization);
    if (given && matchesCredentials(given, user, password)) return next();
    res.set("WWW-Authenticate", 'Basic realm="yiem"').status(401).send("authentication required");
  };
}

/**
 * Bull Board's router, its queues added as they appear (each request adds the new ones). Its
 * modules load here, at the first request to `/admin/queues`, not at the coordinator's start
 * (about 0.2 s of a start that replaces a dead coordinator).
 */
async function loadBullBoard(options: AdminServerOptions): Promise<RequestHandler> {
  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/express"),
  ]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath("/admin/queues");
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: "Yiem" } },
  });
  const shown = new Set<string>();
  const router = serverAdapter.getRouter() as RequestHandler;
  return (req, res, next) => {
    for (const queue of options.queues()) {
      if (shown.has(queue.name)) continue;
      shown.add(queue.name);
      board.addQueue(new BullMQAdapter(queue, { readOnlyMode: options.readOnly === true }));
    }
    router(req, res, next);
  };
}

function mountBullBoard(
  app: Express,
  options: AdminServerOptions,
  credentials: AdminCredentials | undefined,
): void {
  let board: Promise<RequestHandler> | undefined;
  const guards = credentials ? [basicAuth(credentials)] : [];
  app.use("/admin/queues", ...guards, (req: Request, res: Response, next: NextFunction) => {
    board ??= loadBullBoard(options);
    board.then((handle) => handle(req, res, next), next);
  });
}

/** A URL a local client can reach the server at: loopback for a wildcard bind. */
function localUrlOf(host: string, port: number): string {
  if (host === ALL_INTERFACES || host === "::") return `http://${LOOPBACK_HOST}:${port}`;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Serves the coordinator's HTTP side: Bull Board at `/admin/queues` (every queue; basic auth
 * when configured), `/healthz` (liveness: 200 while the process's event loop turns, 503 once
 * it has been silent for `healthStallMs`; answered by a front door thread, so a loaded agent
 * loop never delays it, see `startFrontDoor`), `/readyz` (200 `ready`,
 * or 503 with a one-line reason) and `/metrics` (Prometheus; answers within about half a
 * second whatever Redis does, with the last queue depths). Without credentials it listens on
 * `127.0.0.1` unless `host` says otherwise; with them, on every interface unless `host` says
 * otherwise. Credentials are compared in constant time. Slow clients are bounded by `limits`
 * (`createHttpServer`): a stalled one never locks a liveness probe out.
 *
 * Never starts with half-set credentials: throws `AdminCredentialsError` (see
 * `checkAdminCredentials`) before listening. Rejects with `PortInUseError` when the port is
 * taken.
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServerHandle> {
  const credentials = checkAdminCredentials(options.adminUser, options.adminPassword);
  const host = chooseAdminHost(options.host, credentials !== undefined);
  // Loaded here, not with the module: express and its dependencies took some 25 ms of a
  // replacement coordinator's start, before its first run (docs/PERFORMANCE.md, "Peers").
  const { default: express } = await import("express");
  const app = express();
  app.disable("x-powered-by");
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok", ...options.health() });
  });
  app.get("/readyz", async (_req, res) => {
    const readiness = await options.readiness();
    res.type("text/plain").set("Cache-Control", "no-store");
    if (readiness.ready) res.send("ready\n");
    else res.status(503).send(`${readiness.reason}\n`);
  });
  app.get("/metrics", async (_req, res) => {
    await Promise.all([
      options.metrics.collectQueueDepths(options.queues()),
      options.metrics.collectRunGauges(),
    ]);
    res
      .set("Content-Type", options.metrics.registry.contentType)
      .send(await options.metrics.registry.metrics());
  });
  mountBullBoard(app, options, credentials);
  const server = createHttpServer(app, options.limits);
  if (options.frontDoor === false) {
    const port = await listenOn(server, options.port, host);
    return { url: localUrlOf(host, port), close: () => closeServer(server) };
  }
  const backendPort = await listenOn(server, 0, LOOPBACK_HOST);
  try {
    const door = await startFrontDoor({
      host,
      port: options.port,
      limits: options.limits,
      backendPort,
      health: options.health,
      stallMs: options.healthStallMs,
    });
    return {
      url: localUrlOf(host, door.port),
      close: async () => {
        await door.close();
        await closeServer(server);
      },
    };
  } catch (err) {
    await closeServer(server);
    throw err;
  }
}
