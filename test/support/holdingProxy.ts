import { connect as connectTcp, createServer, type Server, type Socket } from "node:net";

/** A running `startHoldingProxy`. */
export interface HoldingProxy {
  /** The proxy as a Redis URL. */
  url: string;
  /** Forwards every held connection now, and every later one at once. */
  open(): void;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback to the Redis at `redisUrl` that holds the connections `holds` names
 * (by the order they came in, from 1) until `open()`: a connection that takes seconds to come
 * up (a heartbeat thread booting, a client's command connection slower than its subscriber),
 * while the others go through at once.
 *
 * @example const proxy = await startHoldingProxy(redis.url, (n) => n > 2); // the third and later wait
 */
export async function startHoldingProxy(
  redisUrl: string,
  holds: (n: number) => boolean,
): Promise<HoldingProxy> {
  const held: Array<() => void> = [];
  const sockets: Socket[] = [];
  let accepted = 0;
  let opened = false;
  const pipeToRedis = (client: Socket) => {
    const upstream = connectTcp(Number(new URL(redisUrl).port), "127.0.0.1");
    client.pipe(upstream).pipe(client);
    sockets.push(client, upstream);
    for (const socket of [client, upstream]) socket.on("error", () => socket.destroy());
  };
  const proxy: Server = createServer((client) => {
    client.pause();
    const forward = () => {
      client.resume();
      pipeToRedis(client);
    };
    if (opened || !holds(++accepted)) forward();
    else held.push(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    open() {
      opened = true;
      for (const forward of held.splice(0)) forward();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
