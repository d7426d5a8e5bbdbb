/**
 * The coordinator's HTTP front door, run in a worker thread of its own (`startFrontDoor`):
 * it listens on the admin port, answers `/healthz` itself from the heartbeat the main thread
 * sends, and passes every other request through to the admin app the main thread serves on
 * a loopback port. The agent loop's busy event loop therefore never delays a liveness probe,
 * and a stalled loop still fails it: once no heartbeat has come for `stallMs`, `/healthz`
 * answers 503 with how long the loop has been silent.
 */
import {
  Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import { parentPort, workerData } from "node:worker_threads";
import { closeServer, createHttpServer, type HttpLimits, listenOn } from "../../ops/httpListen.js";
import type { FrontDoorMessage, ThreadMessage } from "./frontDoorMessages.js";

/** What the main thread hands the thread at start. */
export interface FrontDoorThreadData {
  host: string;
  port: number;
  limits: HttpLimits;
  /** The loopback port of the main thread's admin app. */
  backendPort: number;
  stallMs: number;
}

const data = workerData as FrontDoorThreadData;
const port = parentPort;
let heartbeat = { at: Date.now(), health: { starting: true } as Record<string, unknown> };
const backend = new Agent({ keepAlive: true, maxSockets: 64 });

/** Answers `/healthz` from the latest heartbeat: 200 while the main loop turns, 503 once it stalls. */
function answerHealth(res: ServerResponse): void {
  const silentMs = Math.max(0, Date.now() - heartbeat.at);
  const stalled = silentMs > data.stallMs;
  const body = stalled
    ? { status: "stalled", eventLoopSilentMs: silentMs }
    : { status: "ok", ...heartbeat.health, eventLoopSilentMs: silentMs };
  res.writeHead(stalled ? 503 : 200, {
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
  });
  res.end(JSON.stringify(body));
}

/** Headers of one hop only: each side of the front door sets its own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
]);

/** `headers` without the hop-by-hop ones. */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
  );
}

/** Passes a request through to the main thread's admin app, streaming both ways. */
function passThrough(req: IncomingMessage, res: ServerResponse): void {
  const inner = request(
    {
      host: "127.0.0.1",
      port: data.backendPort,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.headers),
      agent: backend,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
    },
  );
  inner.on("error", () => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(502, { "Content-Type": "text/plain" }).end("admin app unavailable\n");
  });
  res.on("close", () => inner.destroy());
  req.pipe(inner);
}

const server = createHttpServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0];
  if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) answerHealth(res);
  else passThrough(req, res);
}, data.limits);

port?.on("message", (message: FrontDoorMessage) => {
  if (message.kind === "beat") heartbeat = { at: message.at, health: message.health };
  if (message.kind === "close") {
    backend.destroy();
    void closeServer(server).then(() => post({ kind: "closed" }));
  }
});

function post(message: ThreadMessage): void {
  port?.postMessage(message);
}

listenOn(server, data.port, data.host).then(
  (bound) => post({ kind: "listening", port: bound }),
  (err: NodeJS.ErrnoException & { port?: number }) =>
    post({ kind: "failed", inUse: err.name === "PortInUseError", message: err.message }),
);
