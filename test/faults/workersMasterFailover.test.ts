/**
 * The master holding the failure detector's keys (`{workers}`) dies and a replica takes over:
 * for the seconds of the failover no process can beat, and a beat on a Redis Cluster does not
 * fail at once, it waits out the redirections and goes through once the replica serves the
 * slot. No live process may be taken for dead for it (docs/RELIABILITY.md, "Failure
 * detector", "Partitions and Redis outages"): a short chaos soak on a Redis Cluster saw a
 * coordinator take every other process for dead right after such a failover.
 */
import { clusterKeys } from "@yiem/core";
import { redisSupportsCluster } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const supported = redisSupportsCluster();

describe.skipIf(!supported)("faults: the master of the failure detector's keys dies", () => {
  const cluster = useTestCluster({ coordinators: 2, workers: 2, redisCluster: true });

  it("takes no live process for dead through the failover", async () => {
    const alive = clusterKeys(cluster.redis.prefix).alive;
    const redisCluster = cluster.redisCluster;
    if (!redisCluster) throw new Error("no Redis Cluster");
    await redisCluster.killMaster("SIGKILL", alive);
    await redisCluster.waitForState("ok", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 5000)); // past a TTL and a half
    const lines = [...cluster.coordinators, ...cluster.workers].flatMap((p) => p.lines);
    expect(lines.filter((line) => line.includes("processes found dead"))).toEqual([]);
  }, 120_000);
});
