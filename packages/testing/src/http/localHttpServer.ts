import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Handles one request of a {@link LocalHttpServer}; may be async (its promise is awaited). */
export type LocalHttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A running local HTTP server. */
export interface LocalHttpServer {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Stops listening and destroys every open socket (hanging requests included). Idempotent. */
  close(): Promise<void>;
}

/** Answers 500 when a handler throws, so a test bug shows up as a failed request, not a crash. */
function safely(handler: LocalHttpHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return async (req, res) => {
    try {
      const outcome: unknown = handler(req, res);
      if (outcome instanceof Promise) await outcome;
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`handler failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

/**
 * Starts an HTTP server on 127.0.0.1 on a free port (a shared test fixture).
 * `close()` destroys open sockets first, so a handler that never answers cannot hold a test.
 *
 * @example
 * const server = await startLocalHttpServer((_req, res) => res.end("hello"));
 * try { await fetch(`${server.url}/`); } finally { await server.close(); }
 */
export async function startLocalHttpServer(handler: LocalHttpHandler): Promise<LocalHttpServer> {
  const sockets = new Set<Socket>();
  const server = createServer(safely(handler));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
    return closing;
  };
  return { url: `http://127.0.0.1:${port}`, port, close };
}
