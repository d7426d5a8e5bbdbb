/**
 * Tenants (issue 33, items 2 and 3), as real processes: two coordinators calling a model
 * server that limits its requests as a provider does, under a shared provider limit. One
 * tenant's flood of queued model calls does not hold back another tenant's single run beyond
 * its fair share, and a tenant's budget per day (`YIEM_TENANTS`) stops its runs with
 * `stopReason: "budget"` once its runs together reserved it, their work so far kept, never
 * more model calls than the budget.
 */
import { randomUUID } from "node:crypto";
import { clusterKeys, type RedisClient } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** The model server's limit, and the coordinators' shared one a little under it (as advised). */
const PROVIDER = { requests: 20, windowMs: 800 };
const LIMITS = { "scripted-model": { requests: 20, windowMs: 1000 } };

/** Model calls a day: `capped` may make 3, `burst` 5. */
const TENANTS = {
  capped: { budgetPerDay: { maxModelCalls: 3 } },
  burst: { budgetPerDay: { maxModelCalls: 5 } },
};

/** The model requests received, by the label of their input. */
const received: string[] = [];

/**
 * `<label> <turns>`: `turns` turns of one `sleepFor` call of 1 ms, then the text `done
 * <label>`. The label is recorded as each request arrives.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const [label = "x", turns = "0"] = String(lastUser?.content ?? "").split(" ");
  received.push(label);
  const turn = messages
    .slice(messages.lastIndexOf(lastUser as Wire))
    .filter((m) => m.role === "assistant").length;
  if (turn >= Number(turns)) return { kind: "text", text: `done ${label}` };
  const id = `${label}-${turn}-${randomUUID().slice(0, 8)}`;
  return { kind: "toolCalls", calls: [{ id, name: "sleepFor", arguments: { ms: 1 } }] };
}

const cluster = useTestCluster({
  coordinators: 2,
  workers: 1,
  model: { respond, limits: PROVIDER },
  coordinatorEnv: {
    YIEM_MODEL_LIMITS: JSON.stringify(LIMITS),
    YIEM_TENANTS: JSON.stringify(TENANTS),
    // Runs waiting for their model call's turn hold their slots: room for the whole flood.
    YIEM_COORDINATOR_CONCURRENCY: "200",
  },
});

let redis: RedisClient | undefined;
beforeAll(() => {
  redis = cluster.connectRedis();
});
afterAll(async () => {
  await redis?.quit();
});

/** Sends `input` as tenant `tenant`'s run in a session of its own; resolves its answer. */
async function run(input: string, tenant: string) {
  const { runId } = await cluster.client.send(input, { tenant });
  return cluster.client.waitForAnswer(runId, { timeoutMs: 60_000 });
}

const count = (label: string, among: string[] = received) =>
  among.filter((l) => l === label).length;

describe("a tenant's budget per day", () => {
  it("stops the tenant's second run with the budget stop reason once its runs used it", async () => {
    const first = await run("first 1", "capped"); // a tool call, then its answer: 2 model calls
    expect(first.response.stopReason).toBe("stop");
    expect(first.usage).toMatchObject({ modelCalls: 2 });
    const second = await run("second 3", "capped"); // wants 4 model calls: 1 is left
    expect(second.response.stopReason).toBe("budget");
    const [part] = second.response.content;
    expect(part?.type === "text" ? part.text : "").toContain(
      "maxModelCalls (3 model calls a day for tenant capped",
    );
    expect(second.usage).toMatchObject({ modelCalls: 1, toolCalls: 1 }); // its work so far kept
    expect([count("first"), count("second")]).toEqual([2, 1]);
    const other = await run("other 1", "someone-else"); // another tenant has no such budget
    expect(other.response.stopReason).toBe("stop");
  });

  it("holds for `yiem send --tenant`", async () => {
    const sent = await runCli(["send", "--tenant", "capped", "late 1"], cluster.env);
    expect(sent.stdout).toContain("its budget was reached: maxModelCalls (3 model calls a day");
    expect(count("late")).toBe(0); // the tenant's day was spent already
  });

  it("never lets the tenant's runs at once make more model calls than it", async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => run("burst 2", "burst")), // 18 model calls wanted
    );
    expect(count("burst")).toBe(5);
    const stops = answers.map((a) => a.response.stopReason);
    expect(stops.filter((s) => s === "budget").length).toBeGreaterThanOrEqual(4);
    expect(answers.reduce((sum, a) => sum + (a.usage?.modelCalls ?? 0), 0)).toBe(5);
  });
});

describe("a tenant's single run while another floods", () => {
  // Coordinators that served before: on processes just started, 200 runs opening at once delay
  // the first sends by up to a second (cold code and connections), past the limit's margin.
  beforeAll(async () => {
    await Promise.all(Array.from({ length: 20 }, () => run("warm 0", "warm")));
  }, 60_000);

  it("is admitted ahead of most of the flood's queued model calls", async () => {
    const keys = clusterKeys(cluster.redis.prefix).modelLimit("scripted-model");
    const flood = Promise.all(Array.from({ length: 200 }, () => run("flood 0", "flood")));
    // Hundreds of the flood's model calls wait in line behind the limit of 20 a second.
    await expect
      .poll(async () => redis?.zcard(keys.waiting), { timeout: 30_000, interval: 100 })
      .toBeGreaterThanOrEqual(150);
    const small = await run("small 0", "small");
    expect(small.response.content).toEqual([{ type: "text", text: "done small" }]);
    const beforeSmall = received.slice(0, received.indexOf("small"));
    const floodWaiting = await redis?.zcard(keys.waiting);
    // Admitted within the limit's next window or two: at most ~40 of the flood's calls went first.
    expect(count("flood", beforeSmall)).toBeLessThanOrEqual(60);
    expect(floodWaiting).toBeGreaterThanOrEqual(100); // most of the flood still waits after it
    const answers = await flood;
    expect(answers.every((a) => a.response.stopReason === "stop")).toBe(true);
    expect(count("flood")).toBe(200);
    expect(cluster.model.limited).toEqual([]);
  }, 90_000);
});
