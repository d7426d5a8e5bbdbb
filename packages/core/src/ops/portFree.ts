import { createServer } from "node:http";
import { closeServer, listenOn } from "./httpListen.js";

/**
 * Checks that `port` on `host` can be listened on by listening there and letting go at once:
 * rejects with `PortInUseError` when it is taken, with the listen error otherwise (an address
 * this host does not have). Port 0 (any port) is never checked. What a process runs to fail its
 * start on a taken port before the server that will hold the port is up (another thread's).
 *
 * @example await checkPortFree(3000, "127.0.0.1"); // PortInUseError when taken
 */
export async function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await listenOn(server, port, host);
  await closeServer(server);
}
