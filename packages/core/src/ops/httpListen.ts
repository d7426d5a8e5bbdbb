import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Thrown when an HTTP side cannot listen because its port is taken. The message reads
 * `port 3000 is in use`; a process adds the variable that chose the port (`(PORT)`).
 */
export class PortInUseError extends Error {
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
