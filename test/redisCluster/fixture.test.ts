import {
  CLUSTER_SLOT_COUNT,
  redisSupportsCluster,
  startTestRedisCluster,
  type TestRedisCluster,
} from "@yiem/testing";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const clusterSupported = redisSupportsCluster();
if (!clusterSupported)
  console.warn(
    "skipping redisClusterFixture.test.ts: the redis-server/redis-cli on PATH cannot run a " +
      "Redis Cluster (needs Redis >= 7 with --cluster-enabled and redis-cli --cluster create)",
  );

/** A slot range `[first, last]` with the port of the master that serves it. */
interface SlotRange {
  first: number;
  last: number;
  masterPort: number;
}

/** The slot ranges the cluster serves, from `CLUSTER SLOTS`. */
async function slotRanges(cluster: Cluster): Promise<SlotRange[]> {
  const slots = await cluster.cluster("SLOTS");
  return slots.map(([first, last, master]) => ({ first, last, masterPort: Number(master?.[1]) }));
}

/** One key under `prefix` whose slot falls in each range, found with `CLUSTER KEYSLOT`. */
async function oneKeyPerRange(
  cluster: Cluster,
  prefix: string,
  ranges: SlotRange[],
): Promise<string[]> {
  const keys = new Map<SlotRange, string>();
  for (let i = 0; keys.size < ranges.length && i < 10_000; i++) {
    const key = `${prefix}:k${i}`;
    const slot = await cluster.cluster("KEYSLOT", key);
    const range = ranges.find((r) => r.first <= slot && slot <= r.last);
    if (range && !keys.has(range)) keys.set(range, key);
  }
  return [...keys.values()];
}

/** `host:port` of the master that serves `key`, as the client's slot table has it. */
async function masterOf(cluster: Cluster, key: string): Promise<string | undefined> {
  const slot = await cluster.cluster("KEYSLOT", key);
  return cluster.slots[slot]?.[0];
}

/** Runs `count` jobs that double a number through a BullMQ queue on `connection`. */
async function doubleThroughQueue(
  connection: Cluster,
  name: string,
  prefix: string,
  count: number,
): Promise<number[]> {
  const queue = new Queue<{ n: number }, number>(name, { connection, prefix });
  queue.setMaxListeners(count + 10); // each waitUntilFinished listens for the queue closing
  // waitUntilReady() means connected, not reading: the first XREAD of a QueueEvents on a fresh
  // Cluster client comes late, and from "$" it would miss jobs that finish before it. The
  // queue is new, so reading its event stream from the start misses nothing.
  const events = new QueueEvents(name, { connection, prefix, lastEventId: "0-0" });
  const worker = new Worker<{ n: number }, number>(name, async (job) => job.data.n * 2, {
    connection,
    prefix,
    concurrency: 4,
  });
  try {
    await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
    const jobs = await queue.addBulk(
      Array.from({ length: count }, (_, n) => ({ name: "double", data: { n } })),
    );
    return await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 20_000)));
  } finally {
    await worker.close();
    await events.close();
    await queue.close();
  }
}

describe.skipIf(!clusterSupported)("a local Redis Cluster (3 masters + 3 replicas)", () => {
  let redis: TestRedisCluster;
  const clients: Array<Cluster | Redis> = [];

  /** An ioredis Cluster client, with `maxRetriesPerRequest: null` as BullMQ workers need. */
  const connectCluster = (): Cluster => {
    const cluster = new Cluster(redis.nodes, { redisOptions: { maxRetriesPerRequest: null } });
    cluster.on("error", () => undefined); // node errors while a master is down are expected
    clients.push(cluster);
    return cluster;
  };

  beforeAll(async () => {
    const startedAt = Date.now();
    redis = await startTestRedisCluster();
    console.log(`redis cluster started in ${Date.now() - startedAt} ms: ${redis.nodesEnv}`);
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.stop();
  }, 60_000);

  it("starts a 3+3 cluster whose slots are all covered", async () => {
    expect(redis.nodes).toHaveLength(6);
    expect(redis.nodesEnv).toBe(redis.nodes.join(","));
    expect(await redis.masters()).toHaveLength(3);

    const node = new Redis(redis.nodes[0] ?? "");
    const info = await node.cluster("INFO");
    const view = String(await node.cluster("NODES"));
    await node.quit();
    expect(info).toContain("cluster_state:ok");
    expect(info).toContain(`cluster_slots_assigned:${CLUSTER_SLOT_COUNT}`);
    expect(info).toContain("cluster_known_nodes:6");
    expect(view.match(/\bslave\b/g)).toHaveLength(3);
    expect(view.match(/\bmaster\b/g)).toHaveLength(3);

    const cluster = connectCluster();
    const ranges = await slotRanges(cluster);
    const covered = ranges.reduce((sum, r) => sum + r.last - r.first + 1, 0);
    expect(covered).toBe(CLUSTER_SLOT_COUNT);
  });

  it("runs a BullMQ queue with a hash-tagged name on it", async () => {
    const connection = connectCluster();
    const name = "{tool.echo.0}";
    const prefix = `${redis.prefix}:bull`;
    await redis.resetStats();

    const results = await doubleThroughQueue(connection, name, prefix, 20);

    expect(results).toEqual(Array.from({ length: 20 }, (_, n) => n * 2));
    const counts = await redis.commandCountsPerMaster();
    const owner = `redis://${await masterOf(connection, `${prefix}:${name}:wait`)}`;
    console.log("data commands per master while the queue ran:", Object.fromEntries(counts));
    const busiest = [...counts].sort((a, b) => b[1] - a[1])[0];
    expect(busiest?.[0]).toBe(owner); // every key of the queue shares the {tool.echo.0} slot
  }, 60_000);

  it("places queues {a} and {b} on different masters, and both work", async () => {
    const connection = connectCluster();
    const prefix = `${redis.prefix}:bull`;

    const masterOfA = await masterOf(connection, `${prefix}:{a}:wait`);
    const masterOfB = await masterOf(connection, `${prefix}:{b}:wait`);

    expect(masterOfA).toBeDefined();
    expect(masterOfA).not.toBe(masterOfB);
    expect(await doubleThroughQueue(connection, "{a}", prefix, 3)).toEqual([0, 2, 4]);
    expect(await doubleThroughQueue(connection, "{b}", prefix, 3)).toEqual([0, 2, 4]);
  }, 60_000);

  it("publishes across nodes", async () => {
    const publisher = connectCluster();
    const subscriber = publisher.duplicate();
    subscriber.on("error", () => undefined);
    clients.push(subscriber);
    const channel = `${redis.prefix}:news`;
    const received: string[] = [];
    subscriber.on("message", (from: string, message: string) => {
      if (from === channel) received.push(message);
    });
    await subscriber.subscribe(channel);

    await publisher.publish(channel, "through the cluster client");
    for (const url of redis.nodes) {
      const node = new Redis(url);
      await node.publish(channel, url); // every node, replicas too, relays over the cluster bus
      await node.quit();
    }

    await vi.waitFor(() => expect(received).toHaveLength(1 + redis.nodes.length), {
      timeout: 5_000,
    });
    expect(received).toEqual(
      expect.arrayContaining(["through the cluster client", ...redis.nodes]),
    );
  });

  it("promotes a replica after a master is SIGKILLed", async () => {
    const cluster = connectCluster();
    await cluster.set(`${redis.prefix}:warm-up`, "1");

    const killedAt = Date.now();
    const killedPort = await redis.killMaster();
    await redis.waitForState("ok");
    const promotionMs = Date.now() - killedAt;
    console.log(`replica promoted ${promotionMs} ms after master :${killedPort} was SIGKILLed`);

    const masters = await redis.masters();
    expect(masters).toHaveLength(3);
    expect(masters.map((m) => m.port)).not.toContain(killedPort);
    const ranges = await slotRanges(cluster);
    expect(ranges.map((r) => r.masterPort)).not.toContain(killedPort);
    const keys = await oneKeyPerRange(cluster, redis.prefix, ranges);
    expect(keys).toHaveLength(ranges.length);
    for (const key of keys) {
      await cluster.set(key, `value of ${key}`);
      expect(await cluster.get(key)).toBe(`value of ${key}`);
    }
  }, 60_000);
});
