import type { Duplex } from "node:stream";
import { Cluster, type Redis } from "ioredis";

/**
 * Makes the commands a connection is given in one pass of the event loop go out in one socket
 * write. ioredis writes every command to its socket at once, one system call each; under load
 * a coordinator issues hundreds of commands per pass (every session woken by the same Redis
 * reply or model chunk writes its next command), and those writes were the largest part of its
 * CPU that is neither the `openai` SDK nor start-up. Here the socket is corked at the first
 * write of a pass and uncorked on `process.nextTick`, which Node runs once the current
 * callback and every promise continuation it queued have run: no timer, no wait for the next
 * turn of the loop, so a lone command goes out as soon as the code that sent it yields.
 * Order on the connection is unchanged (one socket, one buffer, written in order).
 *
 * Applies to every socket the connection opens (reconnects included), and for a `Cluster` to
 * every node's connection. Returns `redis`. Never changes what a command does or returns.
 *
 * @example
 * const redis = coalesceWrites(new Redis(url));
 */
export function coalesceWrites<T extends Redis | Cluster>(redis: T): T {
  if (redis instanceof Cluster) {
    for (const node of redis.nodes()) coalesceNodeWrites(node);
    redis.on("+node", (node: Redis) => coalesceNodeWrites(node));
    return redis;
  }
  coalesceNodeWrites(redis as Redis);
  return redis;
}

const COALESCED = Symbol("yiem.coalescedWrites");

/** Wraps the socket ioredis keeps in `stream` now and every one it assigns later. */
function coalesceNodeWrites(node: Redis): void {
  const holder = node as unknown as { stream?: Duplex; [COALESCED]?: true };
  if (holder[COALESCED]) return;
  holder[COALESCED] = true;
  let current = holder.stream;
  if (current) corkPerPass(current);
  Object.defineProperty(holder, "stream", {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (stream: Duplex | undefined) => {
      current = stream;
      if (stream) corkPerPass(stream);
    },
  });
}

/** The first write of a pass corks `stream`; the pass's end uncorks it: one write for all. */
function corkPerPass(stream: Duplex): void {
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = function coalescedWrite(this: Duplex, ...args: Parameters<Duplex["write"]>) {
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Duplex["write"];
}
