import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Keeps at most `max` connections open on `server`. A connection that arrives with `max`
 * open takes the place of the oldest one that has no request in progress (a client still
 * sending its headers, or an idle keep-alive connection), which is closed; when every one has
 * a request in progress, the newcomer is closed instead. So slow or stalled clients hold at
 * most `max` file descriptors, and a new client (a liveness probe) is never locked out by
 * them: it is shut out only by `max` requests in progress at once, each bounded by the
 * server's request timeout. `server.maxConnections` (`max + 1`) backs the count.
 */
export function capConnections(server: Server, max: number): void {
  const open = new Set<Socket>();
  /** Connections with no request in progress, the longest idle first. */
  const idle = new Set<Socket>();
  const inProgress = new WeakMap<Socket, number>();
  const drop = (socket: Socket) => {
    open.delete(socket);
    idle.delete(socket);
  };
  server.maxConnections = max + 1;
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    idle.add(socket);
    socket.once("close", () => drop(socket));
    if (open.size <= max) return;
    const victim = oldestOtherThan(idle, socket) ?? socket;
    drop(victim);
    victim.destroy();
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (inProgress.get(socket) ?? 1) - 1;
      inProgress.set(socket, left);
      if (left === 0 && open.has(socket)) idle.add(socket); // now the most recently idle
    });
  });
}

/** The first (oldest) entry of `idle` that is not `socket`. */
function oldestOtherThan(idle: Set<Socket>, socket: Socket): Socket | undefined {
  for (const candidate of idle) if (candidate !== socket) return candidate;
  return undefined;
}
