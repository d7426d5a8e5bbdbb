import { connect as connectTcp, createServer, type Server, type Socket } from "node:net";

/** A running `startSlowRepliesProxy`. */
export interface SlowRepliesProxy {
  /** The proxy as a Redis URL. */
  url: string;
  /** Whether `source` (`MONITOR`'s `ip:port` of a client) is one of the proxy's connections to Redis. */
  isOwn(source: string): boolean;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback to the Redis at `redisUrl` that passes commands on at once and holds
 * every reply `delayMs` (in order): each round trip a client waits for then takes at least that
 * long, so the commands Redis receives close together (`MONITOR`'s times) went out in one
 * round trip, and a command sent after a reply came arrives `delayMs` after the one before.
 *
 * @example const proxy = await startSlowRepliesProxy(redis.url, 40);
 */
export async function startSlowRepliesProxy(
  redisUrl: string,
  delayMs: number,
): Promise<SlowRepliesProxy> {
  const sockets: Socket[] = [];
  const ownPorts = new Set<number>();
  const proxy: Server = createServer((client) => {
    const upstream = connectTcp(Number(new URL(redisUrl).port), "127.0.0.1");
    upstream.once("connect", () => ownPorts.add(upstream.localPort ?? 0));
    sockets.push(client, upstream);
    for (const socket of [client, upstream]) socket.on("error", () => socket.destroy());
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      setTimeout(() => client.write(chunk), delayMs);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => setTimeout(() => client.destroy(), delayMs));
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    isOwn: (source) => ownPorts.has(Number(source.split(":").at(-1))),
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
