/**
 * The tenant line (issue 33, item 2): a client with `tenantLine` gives each request that
 * names a tenant a BullMQ priority, how many of its tenant's requests wait, so a coordinator
 * busy with one tenant's flood takes another tenant's single run at its next free slot
 * instead of after the whole flood. Real processes: one coordinator with two run slots, a
 * model that takes 150 ms a call.
 */
import { YiemClient } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Queue } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** The label of each model request, in the order they arrived. */
const received: string[] = [];

/** Answers `done <label>` to the input `<label>`, 150 ms later, recording the label. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const label = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  received.push(label);
  return { kind: "text", text: `done ${label}`, delayMs: 150 };
}

const cluster = useTestCluster({
  coordinators: 1,
  workers: 0,
  model: { respond },
  coordinatorEnv: { YIEM_COORDINATOR_CONCURRENCY: "2" },
});

const FLOOD = 24;

/** The BullMQ priority of request job `jobId`, read as any BullMQ client would. */
async function priorityOf(jobId: string): Promise<number> {
  const queue = new Queue("coordinator", {
    connection: { url: cluster.redis.url },
    prefix: `${cluster.redis.prefix}:bull`,
  });
  try {
    return (await queue.getJob(jobId))?.opts.priority ?? 0;
  } finally {
    await queue.close();
  }
}

/**
 * Sends `FLOOD` runs of tenant `big`, then one of tenant `small`: where `small` was asked
 * among them, and the priority of one more `big` request sent once they were answered.
 */
async function floodThenOne(tenantLine: boolean, round: string) {
  const client = new YiemClient({
    redis: cluster.redis.url,
    prefix: cluster.redis.prefix,
    tenantLine,
  });
  try {
    const sent = [];
    for (let i = 0; i < FLOOD; i++)
      sent.push(await client.send(`${round}-big-${i}`, { tenant: `big-${round}` }));
    sent.push(await client.send(`${round}-small`, { tenant: `small-${round}` }));
    await Promise.all(sent.map((s) => client.waitForResponse(s.requestId, { timeoutMs: 60_000 })));
    const place = received.filter((label) => label.startsWith(round)).indexOf(`${round}-small`);
    // Taken in, the flood left the line: the tenant's next request is first in it again.
    const next = await client.send(`${round}-big-after`, { tenant: `big-${round}` });
    await client.waitForResponse(next.requestId, { timeoutMs: 60_000 });
    return { place, nextPriority: await priorityOf(next.requestId) };
  } finally {
    await client.close();
  }
}

afterEach(() => {
  received.length = 0;
});

describe("the tenant line in the coordinator queue", () => {
  it("takes a tenant's one run before most of another tenant's flood queued ahead of it", async () => {
    const { place, nextPriority } = await floodThenOne(true, "lined");
    expect(place).toBeGreaterThanOrEqual(0);
    expect(place).toBeLessThan(FLOOD / 2);
    expect(nextPriority).toBe(1);
  }, 90_000);

  it("without the line, takes the same run after the whole flood: first come, first served", async () => {
    const { place, nextPriority } = await floodThenOne(false, "plain");
    expect(place).toBeGreaterThanOrEqual(FLOOD - 2);
    expect(nextPriority).toBe(0);
  }, 90_000);
});
