/**
 * `--only flow` (issue 33, item 5): flow control for the whole cluster against a model server
 * that limits as a provider does. Two compiled coordinators and tool workers
 * (`startClusterProcesses`, through `openSessionsCluster`) share one provider limit
 * (`YIEM_MODEL_LIMITS`, set to the scripted model's own `limits`: tokens and requests per
 * window); a load of fresh sessions arrives at once (one `queue.addBulk`), each a tool-calling
 * run (a model call asking for two parallel tool calls, then one that answers). Figures, from
 * the model server's side (what the provider saw):
 *
 * - `flowLimitUsedPct`: the tokens the provider admitted over the whole windows from its first
 *   request to its last, as a share of what its token limit allows over them;
 * - `flow429Pct`: the model requests it answered 429, as a share of all it received;
 * - `flowRunsFailed`: runs that did not end with the scripted answer.
 *
 * The tenants' figures (`flowSmallTenantRatio`, `flowBudgetOverrun`) come from phases of their
 * own (`flowTenants.ts`), run on the same cluster after the shared limit's (`FLOW_PHASES`).
 */
import { sampleOf, scrape } from "@yiem/testing";
import type { FlowPlan } from "../plan.js";
import { openSessionsCluster, type SessionsCluster } from "../setup/sessionsCluster.js";
import { runSessions } from "../setup/sessionsLoad.js";
import { flowTenants, measureBudgetOverrun, measureSmallTenant } from "./flowTenants.js";
import type { Flow, FlowPhase } from "./flowTypes.js";

export type { Flow, FlowCluster, FlowDetail, FlowPhase } from "./flowTypes.js";

/** The limit's name in `YIEM_MODEL_LIMITS`: the scripted model's own. */
const LIMIT = "scripted-model";

/** Sums `series` over the coordinators' /metrics. */
async function sumOver(urls: string[], series: string): Promise<number[]> {
  const texts = await Promise.all(urls.map((url) => scrape(`${url}/metrics`)));
  return texts.map((text) => sampleOf(text, series) ?? 0);
}

const total = (values: number[]) => values.reduce((sum, v) => sum + v, 0);

/**
 * The share of the provider's token limit used: the tokens it admitted within the whole
 * windows from its first request on, ÷ what the limit allows in them.
 */
function limitUsed(cluster: SessionsCluster, plan: FlowPlan) {
  const admitted = cluster.model.requests.filter((r) => r.limitedTokens !== undefined);
  const first = Math.min(...admitted.map((r) => r.receivedAt));
  const last = Math.max(...admitted.map((r) => r.receivedAt));
  const windows = Math.max(1, Math.floor((last - first) / plan.windowMs));
  const end = first + windows * plan.windowMs;
  const tokens = total(admitted.filter((r) => r.receivedAt < end).map((r) => r.limitedTokens ?? 0));
  return { windows, tokens, pct: (100 * tokens) / (windows * plan.tokens) };
}

/** The shared limit under load: `flowLimitUsedPct`, `flow429Pct`, `flowRunsFailed`. */
export const measureSharedLimit: FlowPhase = async (cluster, plan, progress) => {
  const { sessions, coordinatorUrls } = cluster;
  progress(`flow: ${plan.sessions} sessions at once on ${coordinatorUrls.length} coordinators`);
  const outcome = await runSessions(
    sessions,
    { kind: "bulk", input: "run both steps" },
    "flow",
    plan.sessions,
    plan.maxMs,
  );
  const requests = sessions.model.requests.length;
  const refused = sessions.model.limited.length;
  const used = limitUsed(sessions, plan);
  const waitSum = total(
    await sumOver(coordinatorUrls, `yiem_model_limit_wait_seconds_sum{limit="${LIMIT}",tenant=""}`),
  );
  const waitCount = total(
    await sumOver(
      coordinatorUrls,
      `yiem_model_limit_wait_seconds_count{limit="${LIMIT}",tenant=""}`,
    ),
  );
  return {
    flowLimitUsedPct: used.pct,
    flow429Pct: requests > 0 ? (100 * refused) / requests : 0,
    flowRunsFailed: outcome.unanswered,
    detail: {
      modelRequests: requests,
      refused,
      refusedSeenByCoordinators: total(
        await sumOver(coordinatorUrls, `yiem_model_limit_429_total{limit="${LIMIT}",tenant=""}`),
      ),
      loadedWindows: used.windows,
      tokensInLoadedWindows: used.tokens,
      callsByCoordinator: await sumOver(
        coordinatorUrls,
        `yiem_model_calls_total{agent="default",model="${LIMIT}"}`,
      ),
      meanWaitS: waitCount > 0 ? waitSum / waitCount : 0,
      wallS: outcome.wallMs / 1000,
    },
  };
};

/** The phases of the scenario, in order, on one cluster. */
export const FLOW_PHASES: readonly FlowPhase[] = [
  measureSharedLimit,
  measureSmallTenant,
  measureBudgetOverrun,
];

/**
 * Starts the cluster (a model limited to `plan`'s tokens and requests per window, tool
 * workers, two coordinators with `YIEM_MODEL_LIMITS` matching it), runs every phase, and
 * closes it whatever happened.
 */
export async function measureFlow(plan: FlowPlan, progress: (text: string) => void): Promise<Flow> {
  const limits = { tokens: plan.tokens, requests: plan.requests, windowMs: plan.windowMs };
  progress(
    `flow: a model limited to ${plan.tokens} tokens and ${plan.requests} requests per ${plan.windowMs / 1000} s, ${plan.coordinators} coordinators sharing it, ${plan.workers} tool workers`,
  );
  const sessions = await openSessionsCluster(plan.modelDelayMs, plan.workers, {
    modelLimits: limits,
  });
  try {
    const env = {
      YIEM_MODEL_LIMITS: JSON.stringify({
        [LIMIT]: { ...limits, outputTokens: plan.outputTokens },
      }),
      YIEM_TENANTS: flowTenants(plan),
    };
    const coordinators = [];
    for (let i = 0; i < plan.coordinators; i++)
      coordinators.push(await sessions.startCoordinator(plan.concurrency, { env }));
    const cluster = { sessions, coordinatorUrls: coordinators.map((c) => c.url) };
    let figures: Partial<Flow> = {};
    for (const phase of FLOW_PHASES)
      figures = { ...figures, ...(await phase(cluster, plan, progress)) };
    return { date: new Date().toISOString(), plan, ...figures } as Flow;
  } finally {
    await sessions.close();
  }
}
