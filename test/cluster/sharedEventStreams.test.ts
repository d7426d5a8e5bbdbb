/**
 * Event streams of one client share one subscriber connection (`SessionEventHub`): on a
 * private Redis (so `CLIENT LIST` and `PUBSUB CHANNELS` see only this test's clients) and on
 * a Redis Cluster. Events are published as coordinators publish them (`publishEvent`: stored,
 * numbered and sent live by one script); the streams are `YiemClient.events`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import {
  type BusEvent,
  clusterKeys,
  type EncodedBusEvent,
  keyLayoutOf,
  YiemClient,
} from "@yiem/core";
import {
  createEventPublisher,
  PARSED_EVENTS,
  publishEvent,
  SessionEventHub,
  streamSessionEvents,
} from "@yiem/core/internal";
import {
  redisSupportsCluster,
  startTestRedis,
  startTestRedisCluster,
  type TestRedis,
} from "@yiem/testing";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";

/** The connections of `CLIENT LIST` that hold subscriptions, with how many channels each. */
async function subscriberConnections(admin: Redis): Promise<Array<{ id: string; sub: number }>> {
  const list = String(await admin.call("CLIENT", "LIST"));
  return list
    .split("\n")
    .map((line) => ({
      id: /\bid=(\d+)/.exec(line)?.[1] ?? "",
      sub: Number(/\bsub=(\d+)/.exec(line)?.[1] ?? 0),
    }))
    .filter((connection) => connection.sub > 0);
}

async function countClients(admin: Redis): Promise<number> {
  return String(await admin.call("CLIENT", "LIST"))
    .split("\n")
    .filter((line) => line.trim() !== "").length;
}

/** The session event channels subscribed now (`PUBSUB CHANNELS`). */
async function subscribedChannels(admin: Redis, prefix: string): Promise<string[]> {
  return (await admin.pubsub("CHANNELS", `${prefix}:events:*`)) as string[];
}

/** What a stream read: its events, and a promise that settles when it ended. */
interface Reader {
  events: BusEvent[];
  ended: Promise<void>;
  stop: AbortController;
}

/** Reads the events of `sessionId` from the start until one numbered `untilSeq` (or its end). */
function readSession(client: YiemClient, sessionId: string, untilSeq = Infinity): Reader {
  const stop = new AbortController();
  const events: BusEvent[] = [];
  const ended = (async () => {
    for await (const event of client.events(sessionId, { fromStart: true, signal: stop.signal })) {
      events.push(event);
      if (event.seq >= untilSeq) break;
    }
  })();
  return { events, ended, stop };
}

/** Publishes turns `from`…`to` of `sessionId` (sequence numbers follow on). */
async function publishTurns(
  command: Redis | Cluster,
  keys: ReturnType<typeof clusterKeys>,
  sessionId: string,
  from: number,
  to: number,
): Promise<void> {
  for (let turn = from; turn <= to; turn++) {
    await publishEvent(command, keys, { sessionId, runId: "r1" }, { type: "turnStart", turn });
  }
}

/** Resolves once every reader ended; rejects after `ms` naming how far each got. */
async function allEnded(readers: Reader[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const got = readers.map((r) => r.events.length).join(",");
      reject(new Error(`streams did not end within ${ms} ms (events each: ${got})`));
    }, ms);
  });
  try {
    await Promise.race([Promise.all(readers.map((r) => r.ended)), late]);
  } finally {
    clearTimeout(timer);
  }
}

const seqsOf = (reader: Reader) => reader.events.map((event) => event.seq);

/**
 * A loopback TCP proxy to `port` whose `freeze` makes the connections open then go silent
 * both ways without closing them (as a cut network does); later connections pass.
 */
async function startFreezingProxy(port: number) {
  const open = new Set<{ frozen: boolean; sockets: Socket[] }>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(port, "127.0.0.1");
    const pair = { frozen: false, sockets: [client, upstream] };
    open.add(pair);
    client.on("data", (data) => pair.frozen || upstream.write(data));
    upstream.on("data", (data) => pair.frozen || client.write(data));
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair.sockets) socket.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    url: `redis://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    freeze: () => {
      for (const pair of open) pair.frozen = true;
    },
    close: () => {
      for (const pair of open) for (const socket of pair.sockets) socket.destroy();
      server.close();
    },
  };
}

describe("event streams on one Redis share one subscriber connection", () => {
  let redis: TestRedis;
  let admin: Redis;
  let command: Redis;
  let keys: ReturnType<typeof clusterKeys>;

  beforeAll(async () => {
    redis = await startTestRedis({ privateServer: true });
    admin = new Redis(redis.url);
    command = new Redis(redis.url);
    keys = clusterKeys(redis.prefix);
  });

  afterAll(async () => {
    admin?.disconnect();
    command?.disconnect();
    await redis?.stop();
  });

  const openClient = () => {
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    onTestFinished(() => client.close());
    return client;
  };

  it("serves 200 streams of different sessions over one subscriber connection, each with its own events in order", async () => {
    const before = await countClients(admin);
    const client = openClient();
    const sessions = Array.from({ length: 200 }, () => randomUUID());
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 1, 1)));
    const readers = sessions.map((sessionId) => readSession(client, sessionId, 3));
    await expect
      .poll(async () => (await subscribedChannels(admin, redis.prefix)).length, { timeout: 10_000 })
      .toBe(200);
    const subscribers = await subscriberConnections(admin);
    expect(subscribers).toHaveLength(1);
    expect(subscribers[0]?.sub).toBe(200);
    // the client's command connection and the shared subscriber, nothing per stream
    expect(await countClients(admin)).toBeLessThanOrEqual(before + 2);
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 2, 3)));
    await allEnded(readers, 15_000);
    sessions.forEach((sessionId, i) => {
      const reader = readers[i] as Reader;
      expect(seqsOf(reader)).toEqual([1, 2, 3]);
      expect(reader.events.every((event) => event.sessionId === sessionId)).toBe(true);
    });
  });

  it("loses no event when its subscriber connection is killed mid-stream (CLIENT KILL), with nothing published after", async () => {
    const client = openClient();
    const sessions = [randomUUID(), randomUUID(), randomUUID()];
    const readers = sessions.map((sessionId) => readSession(client, sessionId, 6));
    const holder = readSession(client, randomUUID()); // keeps a channel held after the others end
    await expect
      .poll(async () => (await subscribedChannels(admin, redis.prefix)).length, { timeout: 10_000 })
      .toBe(4);
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 1, 2)));
    await expect.poll(() => readers.every((r) => r.events.length === 2)).toBe(true);
    const [killed] = await subscriberConnections(admin);
    expect(Number(await admin.call("CLIENT", "KILL", "TYPE", "pubsub"))).toBe(1);
    // published while the subscriber is away: only a read of the stream can bring these
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 3, 6)));
    await allEnded(readers, 15_000);
    for (const reader of readers) expect(seqsOf(reader)).toEqual([1, 2, 3, 4, 5, 6]);
    // a new connection holds the channel still held, the ended streams' ones are let go
    await expect
      .poll(() => subscriberConnections(admin))
      .toEqual([{ id: expect.not.stringMatching(`^${killed?.id}$`), sub: 1 }]);
    holder.stop.abort();
    await holder.ended;
  });

  it("hands a relay each event as its JSON's bytes (the JSON a parsed reader sees), one buffer shared by every relay reader of a live event", async () => {
    const client = openClient();
    const sessionId = randomUUID();
    await publishTurns(command, keys, sessionId, 1, 1); // replayed: read from the stream
    const stop = new AbortController();
    const relays = Array.from({ length: 3 }, () => {
      const read: EncodedBusEvent[] = [];
      const ended = (async () => {
        const events = client.encodedEvents(sessionId, { fromStart: true, signal: stop.signal });
        for await (const event of events) {
          read.push(event);
          if (event.seq >= 3) break;
        }
      })();
      return { read, ended };
    });
    const parsed = readSession(client, sessionId, 3);
    await expect.poll(() => relays.every((relay) => relay.read.length === 1)).toBe(true);
    const publisher = createEventPublisher(command, keys, { sessionId, runId: "r1" });
    await publisher.emit({ type: "turnStart", turn: 2 });
    await publisher.emitLive({ type: "messageUpdate", delta: "line one\nline two" });
    await publisher.emit({ turn: 3, type: "turnStart" }); // type not first: parsed whole
    await publisher.flush();
    await Promise.all([...relays.map((relay) => relay.ended), parsed.ended]);
    for (const { read } of relays) {
      expect(read.map(({ seq, type, live }) => ({ seq, type, live }))).toEqual(
        parsed.events.map(({ seq, type, live }) => ({ seq, type, live })),
      );
      expect(read.map((event) => JSON.parse(event.json.toString("utf8")))).toEqual(parsed.events);
      expect(read.some((event) => event.json.includes("\n"))).toBe(false); // one line each
    }
    expect(parsed.events.map((event) => event.live)).toEqual([
      undefined,
      undefined,
      true,
      undefined,
    ]);
    // the live events (2 and on) are one buffer for every relay reader, never a copy each
    const [first, ...others] = relays.map((relay) => relay.read);
    for (const other of others) {
      for (let at = 1; at < 4; at++) expect(other[at]?.json).toBe(first?.[at]?.json);
    }
    stop.abort();
  });

  it("says when a stream is live (onLive): what is published from then on waits for its reader, live text included", async () => {
    const client = openClient();
    const sessionId = randomUUID();
    let live = false;
    const stream = client.events(sessionId, {
      afterSeq: 0,
      onLive: () => {
        live = true;
      },
    });
    const first = stream.next(); // a stream starts at its first read
    await expect.poll(() => live).toBe(true);
    const publisher = createEventPublisher(command, keys, { sessionId, runId: "r1" });
    await publisher.emit({ type: "turnStart", turn: 1 });
    await publisher.emitLive({ type: "messageUpdate", delta: "hi" });
    await publisher.emitLive({ type: "messageUpdate", delta: " there" });
    await publisher.emit({ type: "turnStart", turn: 2 });
    await publisher.flush();
    const read = [(await first).value as BusEvent];
    while (read.length < 4) read.push((await stream.next()).value as BusEvent);
    await stream.return(undefined);
    expect(read.map((event) => [event.seq, event.type, event.live])).toEqual([
      [1, "turnStart", undefined],
      [1, "messageUpdate", true],
      [1, "messageUpdate", true],
      [2, "turnStart", undefined],
    ]);
  });

  it("unsubscribes a session's channel when its last stream ends, and ends the streams still open when the client closes", async () => {
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    const [a, b] = [randomUUID(), randomUUID()];
    const first = readSession(client, a);
    const second = readSession(client, a);
    const other = readSession(client, b);
    const channels = () => subscribedChannels(admin, redis.prefix);
    await expect
      .poll(async () => (await channels()).sort(), { timeout: 10_000 })
      .toEqual([keys.eventChannel(a), keys.eventChannel(b)].sort());
    first.stop.abort();
    await first.ended;
    await publishTurns(command, keys, a, 1, 1);
    await expect.poll(() => second.events.length).toBe(1); // the other stream of `a` still gets it
    expect(await channels()).toContain(keys.eventChannel(a));
    second.stop.abort();
    await second.ended;
    await expect.poll(channels).toEqual([keys.eventChannel(b)]);
    await client.close();
    await allEnded([other], 5000);
    await expect.poll(() => subscriberConnections(admin)).toEqual([]);
  });
});

describe("an event stream whose shared subscriber goes silent without a reset", () => {
  it("reconnects it once its ping goes unanswered and reads what was published meanwhile", async () => {
    const redis = await startTestRedis({ privateServer: true });
    onTestFinished(() => redis.stop());
    const proxy = await startFreezingProxy(Number(new URL(redis.url).port));
    const direct = new Redis(redis.url);
    const throughProxy = new Redis(proxy.url); // what the hub's subscriber is opened beside
    const keys = clusterKeys(redis.prefix);
    const hub = new SessionEventHub({ command: throughProxy, keys, probeMs: 300 });
    onTestFinished(() => {
      hub.close();
      proxy.close();
      direct.disconnect();
      throughProxy.disconnect();
    });
    const sessionId = randomUUID();
    const events: BusEvent[] = [];
    const ended = (async () => {
      const stream = streamSessionEvents({
        command: direct,
        hub,
        keys,
        sessionId,
        form: PARSED_EVENTS,
        fromStart: true,
      });
      for await (const event of stream) {
        events.push(event);
        if (event.seq >= 3) break;
      }
    })();
    await expect.poll(() => subscribedChannels(direct, redis.prefix)).toHaveLength(1);
    await publishTurns(direct, keys, sessionId, 1, 1);
    await expect.poll(() => events.length).toBe(1);
    proxy.freeze();
    await publishTurns(direct, keys, sessionId, 2, 3); // nothing reaches the silent connection
    await allEnded([{ events, ended, stop: new AbortController() }], 10_000);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
  });
});

const clusterSupported = redisSupportsCluster();

describe.skipIf(!clusterSupported)("event streams on a Redis Cluster", () => {
  it("share one subscriber connection across the cluster's nodes and lose no event when it is killed", async () => {
    const redisCluster = await startTestRedisCluster();
    onTestFinished(() => redisCluster.stop());
    const target = { clusterNodes: redisCluster.nodes };
    const keys = clusterKeys(redisCluster.prefix, keyLayoutOf(target));
    const command = new Cluster(
      redisCluster.nodes.map((url) => ({ port: Number(new URL(url).port) })),
    );
    const admins = redisCluster.nodes.map((url) => new Redis(url));
    onTestFinished(() => {
      command.disconnect();
      for (const admin of admins) admin.disconnect();
    });
    const client = new YiemClient({ redis: target, prefix: redisCluster.prefix });
    onTestFinished(() => client.close());
    const sessions = Array.from({ length: 20 }, () => randomUUID()); // slots all over the masters
    const readers = sessions.map((sessionId) => readSession(client, sessionId, 4));
    const subscriptions = async () => (await Promise.all(admins.map(subscriberConnections))).flat();
    await expect
      .poll(async () => (await subscriptions()).map((c) => c.sub), { timeout: 15_000 })
      .toEqual([20]);
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 1, 2)));
    await expect.poll(() => readers.every((r) => r.events.length === 2)).toBe(true);
    let kills = 0;
    for (const admin of admins)
      kills += Number(await admin.call("CLIENT", "KILL", "TYPE", "pubsub"));
    expect(kills).toBe(1);
    await Promise.all(sessions.map((sessionId) => publishTurns(command, keys, sessionId, 3, 4)));
    await allEnded(readers, 20_000);
    for (const reader of readers) expect(seqsOf(reader)).toEqual([1, 2, 3, 4]);
  });
});
