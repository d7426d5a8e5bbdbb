/**
 * The tenant phases of `--only flow` (issue 33, items 2, 3 and 5), on the shared limit's
 * cluster after its own phase:
 *
 * - `flowSmallTenantRatio`: a tenant's one run while another tenant's flood of `floodRuns`
 *   runs waits (sent first, through a client with `tenantLine`), its answer time ÷ its
 *   unloaded answer time plus one model call (medians of `SMALL_RUNS` runs each, sent
 *   `SMALL_RUN_GAP_MS` apart: each is the tenant's one run. Sent back to back they would be a
 *   stream of the tenant's runs, which the fair line serves at its share of the limit: half of
 *   it beside one other tenant, a call every two of the limit's call intervals);
 * - `flowBudgetOverrun`: a tenant with a budget per day of `budgetCalls` model calls
 *   (`YIEM_TENANTS`) sends `budgetRuns` runs at once (two model calls each): the model calls
 *   the provider received for it beyond the budget.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { YiemClient } from "@yiem/core";
import { sampleOf, scrape } from "@yiem/testing";
import type { FlowPlan } from "../plan.js";
import type { FlowCluster, FlowPhase } from "./flowTypes.js";

/** How many runs of the small tenant each median is taken over. */
const SMALL_RUNS = 5;

/** The pause between two of the small tenant's runs, so that each is its one run. */
const SMALL_RUN_GAP_MS = 1000;

/** The flood is sent this many runs at a time. */
const SEND_BATCH = 200;

/** The tenant whose budget per day `budgetOverrun` spends (`YIEM_TENANTS` of the coordinators). */
export const CAPPED_TENANT = "capped";

/** The coordinators' `YIEM_TENANTS` for the phases: the capped tenant's budget per day. */
export function flowTenants(plan: FlowPlan): string {
  return JSON.stringify({ [CAPPED_TENANT]: { budgetPerDay: { maxModelCalls: plan.budgetCalls } } });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** A client of the cluster that lines tenants up fairly in the coordinator queue. */
function lineClient(cluster: FlowCluster): YiemClient {
  const { redis } = cluster.sessions;
  return new YiemClient({ redis: redis.url, prefix: redis.prefix, tenantLine: true });
}

/** When (ms after its send) a run's events arrived: its start, each model call's end, its end. */
export interface RunMarks {
  startedMs: number;
  modelCallsEndedMs: number[];
  endedMs: number;
}

/** Sends one run of `tenant` and follows its events: when each step of it arrived. */
async function timeOneRun(client: YiemClient, tenant: string, plan: FlowPlan): Promise<RunMarks> {
  const started = performance.now();
  const sessionId = randomUUID();
  const marks: RunMarks = { startedMs: Number.NaN, modelCallsEndedMs: [], endedMs: Number.NaN };
  const since = () => performance.now() - started;
  const followed = (async () => {
    for await (const event of client.events(sessionId, { fromStart: true, untilAgentEnd: true })) {
      if (event.type === "agentStart" && Number.isNaN(marks.startedMs)) marks.startedMs = since();
      if (event.type === "messageEnd" && event.message.role === "assistant")
        marks.modelCallsEndedMs.push(since());
    }
  })();
  const sent = await client.send("run both steps", { tenant, sessionId });
  await client.waitForResponse(sent.requestId, { timeoutMs: plan.maxMs });
  marks.endedMs = since();
  await Promise.race([followed, sleep(2000)]);
  return marks;
}

/** Sends `count` runs of `tenant`, `SEND_BATCH` at a time; resolves with their sessions. */
async function sendFlood(client: YiemClient, tenant: string, count: number): Promise<string[]> {
  const sessions: string[] = [];
  for (let sent = 0; sent < count; sent += SEND_BATCH) {
    const batch = Math.min(SEND_BATCH, count - sent);
    const replies = await Promise.all(
      Array.from({ length: batch }, () => client.send("run both steps", { tenant })),
    );
    sessions.push(...replies.map((r) => r.sessionId));
  }
  return sessions;
}

/** The sum and count of `tenant`'s waits for a turn (s), over the coordinators' /metrics. */
async function waitsOf(
  cluster: FlowCluster,
  tenant: string,
): Promise<{ sum: number; count: number }> {
  const texts = await Promise.all(cluster.coordinatorUrls.map((url) => scrape(`${url}/metrics`)));
  const series = (part: string) =>
    `yiem_model_limit_wait_seconds_${part}{limit="scripted-model",tenant="${tenant}"}`;
  const sumOf = (part: string) =>
    texts.reduce((sum, text) => sum + (sampleOf(text, series(part)) ?? 0), 0);
  return { sum: sumOf("sum"), count: sumOf("count") };
}

/** Ends the flood: its waiting runs removed, its running ones aborted, until none is active. */
async function clearFlood(cluster: FlowCluster, client: YiemClient, sessions: string[]) {
  const { queue } = cluster.sessions;
  await queue.drain();
  for (let i = 0; i < sessions.length; i += SEND_BATCH)
    await Promise.all(
      sessions.slice(i, i + SEND_BATCH).map((id) => client.abort(id).catch(() => undefined)),
    );
  for (const until = Date.now() + 120_000; Date.now() < until; await sleep(250)) {
    if ((await queue.getActiveCount()) === 0) return;
  }
}

/** `flowSmallTenantRatio`: a tenant's one run under another's flood, against its unloaded time. */
export const measureSmallTenant: FlowPhase = async (cluster, plan, progress) => {
  const client = lineClient(cluster);
  try {
    // Unloaded means the limit's window is empty too: the previous phase's calls leave it first.
    await sleep(plan.windowMs + 1000);
    const unloaded: RunMarks[] = [];
    for (let i = 0; i < SMALL_RUNS; i++) {
      if (i > 0) await sleep(SMALL_RUN_GAP_MS);
      unloaded.push(await timeOneRun(client, "small", plan));
    }
    progress(`flow: a flood of ${plan.floodRuns} runs of one tenant, then another's runs`);
    const flood = await sendFlood(client, "flood", plan.floodRuns);
    const loaded: RunMarks[] = [];
    const before = await waitsOf(cluster, "small");
    for (let i = 0; i < SMALL_RUNS; i++) {
      await sleep(SMALL_RUN_GAP_MS); // the first one too: the flood has begun to wait
      loaded.push(await timeOneRun(client, "small", plan));
    }
    const after = await waitsOf(cluster, "small");
    await clearFlood(cluster, client, flood);
    const ends = (runs: RunMarks[]) => median(runs.map((r) => r.endedMs));
    const ratio = ends(loaded) / (ends(unloaded) + plan.modelDelayMs);
    return {
      flowSmallTenantRatio: ratio,
      tenantDetail: {
        unloadedMs: ends(unloaded),
        loadedMs: ends(loaded),
        flood: flood.length,
        loadedStartedMs: median(loaded.map((r) => r.startedMs)),
        loadedModelCallsEndedMs: [0, 1].map((i) =>
          median(loaded.map((r) => r.modelCallsEndedMs[i] ?? Number.NaN)),
        ),
        loadedTurnWaitMs:
          ((after.sum - before.sum) / Math.max(1, after.count - before.count)) * 1000,
      },
    };
  } finally {
    await client.close();
  }
};

/** `flowBudgetOverrun`: a tenant's runs at once against its budget per day. */
export const measureBudgetOverrun: FlowPhase = async (cluster, plan, progress) => {
  const client = lineClient(cluster);
  const model = cluster.sessions.model;
  const before = model.requests.length;
  try {
    progress(
      `flow: ${plan.budgetRuns} runs at once of a tenant allowed ${plan.budgetCalls} model calls a day`,
    );
    const label = `budget ${Date.now()}`;
    const sent = await Promise.all(
      Array.from({ length: plan.budgetRuns }, () => client.send(label, { tenant: CAPPED_TENANT })),
    );
    await Promise.all(
      sent.map((s) => client.waitForResponse(s.requestId, { timeoutMs: plan.maxMs })),
    );
    const calls = model.requests.slice(before).filter((r) => {
      const messages = (r.body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
      return messages.some((m) => m.role === "user" && m.content === label);
    }).length;
    return { flowBudgetOverrun: Math.max(0, calls - plan.budgetCalls), budgetCallsMade: calls };
  } finally {
    await client.close();
  }
};
