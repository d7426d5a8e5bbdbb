import { Worker } from "node:worker_threads";
import { bundledThreadFile } from "../../ops/bundledThreads.js";
import { type HttpLimits, PortInUseError } from "../../ops/httpListen.js";
import { SETTINGS } from "../../settings/catalogue.js";
import type { FrontDoorMessage, ThreadMessage } from "./frontDoorMessages.js";
import type { FrontDoorThreadData } from "./frontDoorThread.js";

/** How often the main thread tells the front door it is alive. */
const HEARTBEAT_MS = 100;

/** How long `close` waits for the thread to close its connections before ending it. */
const CLOSE_WAIT_MS = 2000;

/** Options of `startFrontDoor`. */
export interface FrontDoorOptions {
  host: string;
  port: number;
  limits?: HttpLimits;
  /** The loopback port of the admin app the main thread serves. */
  backendPort: number;
  /** The facts `/healthz` shows beside `status`, read at each heartbeat. */
  health: () => Record<string, unknown>;
  /** `/healthz` fails once the main thread has sent no heartbeat for this long. @defaultValue `YIEM_HEALTH_STALL_MS`'s */
  stallMs?: number;
}

/** A running front door. */
export interface FrontDoor {
  /** The port it listens on (the real one when 0 was asked). */
  port: number;
  close(): Promise<void>;
}

/**
 * The thread's file in this process's bundle (`bundledThreadFile`); else its module beside
 * this one: the compiled `.js`; or, when this file runs as its
 * TypeScript source (tsx, vitest), the `.ts` beside it, loaded through tsx's loader, which a
 * worker thread does not inherit from its parent.
 */
function startThread(data: FrontDoorThreadData): Worker {
  const bundled = bundledThreadFile("frontDoorThread");
  if (bundled) return new Worker(bundled, { workerData: data });
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(new URL("./frontDoorThread.js", import.meta.url), { workerData: data });
  const source = new URL("./frontDoorThread.ts", import.meta.url).href;
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

/**
 * Starts the coordinator's HTTP front door in a worker thread of its own (see
 * `frontDoorThread.ts`): it listens on `host:port` with `limits`, answers `/healthz` from the
 * heartbeat this thread sends every 100 ms (so a busy agent loop never delays a probe, and a
 * loop silent for `stallMs` fails it), and passes every other request to `backendPort`.
 * Rejects with `PortInUseError` when the port is taken.
 *
 * @example const door = await startFrontDoor({ host: "127.0.0.1", port: 3000, backendPort, health: () => ({}) });
 */
export async function startFrontDoor(options: FrontDoorOptions): Promise<FrontDoor> {
  const data: FrontDoorThreadData = {
    host: options.host,
    port: options.port,
    limits: options.limits ?? {},
    backendPort: options.backendPort,
    stallMs: options.stallMs ?? SETTINGS.healthStallMs.default,
  };
  const worker = startThread(data);
  const port = await listeningPort(worker, options.port);
  // A thread that fails later leaves /healthz unanswered, which an orchestrator acts on;
  // it must not take the coordinator down with an unhandled 'error' event.
  worker.on("error", () => undefined);
  const send = (message: FrontDoorMessage) => worker.postMessage(message);
  const beat = () => send({ kind: "beat", at: Date.now(), health: options.health() });
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return {
    port,
    async close() {
      clearInterval(timer);
      send({ kind: "close" });
      const closed = waitForMessage(worker, "closed");
      const waited = new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref());
      await Promise.race([closed, waited]);
      await worker.terminate();
    },
  };
}

/** Resolves with the port the thread listens on; rejects (and ends the thread) when it cannot. */
async function listeningPort(worker: Worker, asked: number): Promise<number> {
  const first = await new Promise<ThreadMessage | Error>((resolve) => {
    const onError = (err: Error) => done(err);
    const onMessage = (message: ThreadMessage) => done(message);
    const done = (outcome: ThreadMessage | Error) => {
      worker.off("error", onError);
      worker.off("message", onMessage);
      resolve(outcome);
    };
    worker.once("error", onError);
    worker.once("message", onMessage);
  });
  if (!(first instanceof Error) && first.kind === "listening") return first.port;
  await worker.terminate();
  if (first instanceof Error) throw first;
  if (first.kind === "failed" && first.inUse) throw new PortInUseError(asked);
  throw new Error(first.kind === "failed" ? first.message : "the front door closed at start");
}

/** The thread's next message (of `kind`, when given). */
function waitForMessage(worker: Worker, kind?: ThreadMessage["kind"]): Promise<ThreadMessage> {
  return new Promise((resolve) => {
    const onMessage = (message: ThreadMessage) => {
      if (kind && message.kind !== kind) return;
      worker.off("message", onMessage);
      resolve(message);
    };
    worker.on("message", onMessage);
  });
}
