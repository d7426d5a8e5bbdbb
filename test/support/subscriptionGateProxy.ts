import { connect as connectTcp, createServer, type Server, type Socket } from "node:net";
import type { YiemClient } from "@yiem/core";

/** A running `startSubscriptionGateProxy`. */
export interface SubscriptionGateProxy {
  /** The proxy as a Redis URL. */
  url: string;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/** The session whose event channel (`<prefix>:events:<session>`) a command chunk subscribes. */
function subscribedSession(chunk: Buffer): string | undefined {
  // `$9`, the length of `subscribe`: an `unsubscribe` passes.
  const command = /\$9\r\nsubscribe\r\n\$\d+\r\n[^\r]*:events:([^\r]+)\r\n/i.exec(
    chunk.toString("latin1"),
  );
  return command?.[1];
}

/**
 * A TCP proxy on loopback to the Redis at `redisUrl` that holds a connection's `SUBSCRIBE` of
 * a session's event channel, and whatever the connection sends after it, until
 * `gate(sessionId)` settles; replies and every other command pass at once. A test decides
 * there when a client's subscription reaches Redis: after the events it must not see live.
 *
 * @example const proxy = await startSubscriptionGateProxy(redis.url, (sessionId) => ended(sessionId));
 */
export async function startSubscriptionGateProxy(
  redisUrl: string,
  gate: (sessionId: string) => Promise<void>,
): Promise<SubscriptionGateProxy> {
  const sockets: Socket[] = [];
  const proxy: Server = createServer((client) => {
    const upstream = connectTcp(Number(new URL(redisUrl).port), "127.0.0.1");
    sockets.push(client, upstream);
    for (const socket of [client, upstream]) socket.on("error", () => socket.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    upstream.pipe(client);
    /** The chunks waiting behind a held subscription, the subscription first. */
    let held: Buffer[] | undefined;
    const pass = (chunk: Buffer) => {
      if (held) return void held.push(chunk);
      const sessionId = subscribedSession(chunk);
      if (sessionId === undefined) return void upstream.write(chunk);
      held = [chunk];
      const release = () => {
        const [subscription, ...rest] = held ?? [];
        held = undefined;
        if (subscription) upstream.write(subscription);
        for (const next of rest) pass(next);
      };
      gate(sessionId).then(release, release);
    };
    client.on("data", pass);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = new URL(redisUrl); // its password and database, through the proxy
  url.host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** Resolves once session `sessionId`'s run has ended (its first `agentEnd`), 20 s at most. */
async function runEnded(client: YiemClient, sessionId: string): Promise<void> {
  const options = { fromStart: true, untilAgentEnd: true, signal: AbortSignal.timeout(20_000) };
  for await (const _ of client.events(sessionId, options)) {
    // read to the run's end
  }
}

/** Each session whose subscription a `startQueuedFirstGate` proxy held, and whether it was known. */
export interface HeldSubscription {
  sessionId: string;
  /** Whether the cluster knew the session when the subscription came (its request sent first). */
  queuedFirst: boolean;
}

/**
 * A `startSubscriptionGateProxy` that lets the coordinator win every race it could: a
 * subscription to a session's events passes at once when the cluster does not know the session
 * yet (the subscriber follows first), and is held until the session's run has ended (20 s at
 * most) when it does (its request was sent first: the subscriber sees the stored events only).
 * `held` lists each subscription seen, in order.
 */
export async function startQueuedFirstGate(
  client: YiemClient,
  redisUrl: string,
): Promise<{ proxy: SubscriptionGateProxy; held: HeldSubscription[] }> {
  const held: HeldSubscription[] = [];
  const proxy = await startSubscriptionGateProxy(redisUrl, async (sessionId) => {
    const queuedFirst = await client.hasSession(sessionId);
    held.push({ sessionId, queuedFirst });
    if (queuedFirst) await runEnded(client, sessionId).catch(() => undefined);
  });
  return { proxy, held };
}

/** Each session whose subscription a `startDecidedFirstGate` proxy held, and how it was let through. */
export interface HeldResumeSubscription {
  sessionId: string;
  /** Whether no call of the known session waited any more (its decision sent first). */
  decidedFirst: boolean;
}

/**
 * A `startSubscriptionGateProxy` that lets the coordinator win every race a resume could: a
 * subscription to a session's events passes at once when the cluster does not know the session
 * yet (a run the subscriber starts) or a call of the session still awaits a decision (the
 * subscriber follows before it decides), and is held until the session's first `agentEnd` (20 s
 * at most) when none does (the decision was sent, and recorded, first: the subscriber sees the
 * resumed run's stored events only). Suits a session whose first run parks for approval (a
 * parked run ends with no `agentEnd`). `held` lists each subscription seen, in order.
 */
export async function startDecidedFirstGate(
  client: YiemClient,
  redisUrl: string,
): Promise<{ proxy: SubscriptionGateProxy; held: HeldResumeSubscription[] }> {
  const held: HeldResumeSubscription[] = [];
  const proxy = await startSubscriptionGateProxy(redisUrl, async (sessionId) => {
    const known = await client.hasSession(sessionId);
    const waiting = known && (await client.pendingApprovals(sessionId)).length > 0;
    const decidedFirst = known && !waiting;
    held.push({ sessionId, decidedFirst });
    if (decidedFirst) await runEnded(client, sessionId).catch(() => undefined);
  });
  return { proxy, held };
}
