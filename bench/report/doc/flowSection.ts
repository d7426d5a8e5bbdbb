import type { Flow } from "../../measurements/flow.js";
import { count, num, table } from "./markdown.js";

/** Whether `value` meets a target (`atLeast` or at most `atMost`). */
function verdict(value: number | undefined, target: { atLeast?: number; atMost?: number }) {
  if (value === undefined) return "not measured yet";
  const met =
    (target.atLeast === undefined || value >= target.atLeast) &&
    (target.atMost === undefined || value <= target.atMost);
  return met ? "**met**" : "**missed**";
}

/** Provider limits shared by two coordinators under load (issue 33). */
export function flowSection(f: Flow): string {
  const p = f.plan;
  const d = f.detail;
  const rows = [
    [
      "`flowLimitUsedPct`",
      num(f.flowLimitUsedPct, 1),
      "≥ 90",
      verdict(f.flowLimitUsedPct, { atLeast: 90 }),
    ],
    ["`flow429Pct`", num(f.flow429Pct, 2), "≤ 1", verdict(f.flow429Pct, { atMost: 1 })],
    ["`flowRunsFailed`", String(f.flowRunsFailed), "0", verdict(f.flowRunsFailed, { atMost: 0 })],
    [
      "`flowSmallTenantRatio`",
      f.flowSmallTenantRatio === undefined ? "n/a" : num(f.flowSmallTenantRatio, 2),
      "≤ 2",
      verdict(f.flowSmallTenantRatio, { atMost: 2 }),
    ],
    [
      "`flowBudgetOverrun`",
      f.flowBudgetOverrun === undefined ? "n/a" : String(f.flowBudgetOverrun),
      "0",
      verdict(f.flowBudgetOverrun, { atMost: 0 }),
    ],
  ];
  return `### Provider limits under load

Measured alone (\`npm run bench -- --only flow\`, ${f.date.slice(0, 10)}): ${p.coordinators} compiled
coordinators and ${p.workers} tool workers started with \`startClusterProcesses\`, ${count(p.sessions)}
fresh sessions at once (one \`addBulk\`), each a run of two model calls and two parallel tool calls,
against a scripted model limited as a provider is to ${count(p.tokens)} tokens and ${count(p.requests)}
requests per ${p.windowMs / 1000} s (a window of seconds instead of a minute, so the run is short; tool
definitions count as prompt tokens, as providers count them). \`YIEM_MODEL_LIMITS\` says the same
(\`outputTokens\` ${p.outputTokens}). From the model server's side: \`flowLimitUsedPct\` is the
tokens it admitted within the ${d.loadedWindows} whole windows from its first request to its last, over
what its limit allows in them; \`flow429Pct\` the requests it answered 429 of all it received.

${table(["figure", "value", "target", "verdict"], rows)}

${count(d.modelRequests)} model requests, ${d.refused} answered 429 (the coordinators' \`yiem_model_limit_429_total\`
counted ${d.refusedSeenByCoordinators}); calls by coordinator ${d.callsByCoordinator.map((n) => count(n)).join(" + ")}; mean
wait for a turn ${num(d.meanWaitS, 1)} s; ${num(d.wallS, 1)} s from the first request to the last answer.
${tenantText(f)}`;
}

/** What the tenant phases did (\`bench/measurements/flowTenants.ts\`). */
function tenantText(f: Flow): string {
  const t = f.tenantDetail;
  if (!t) return "The tenant phases did not run.";
  return `Then, on the same cluster: \`flowSmallTenantRatio\` is a tenant's one run (median of 5, sent a second
apart so that each is the tenant's one run) while
another tenant's flood of ${count(t.flood)} runs waits, sent first through a client with \`tenantLine\`
(${num(t.unloadedMs, 0)} ms alone, ${num(t.loadedMs, 0)} ms behind the flood), over its time alone plus one model
call (${f.plan.modelDelayMs} ms); \`flowBudgetOverrun\` is the model calls beyond its budget per day of
${f.plan.budgetCalls} that a tenant's ${f.plan.budgetRuns} runs sent at once made (${f.budgetCallsMade ?? "?"} made).
${startText(t)}

Sent back to back, a tenant's runs are a stream, which the fair line serves
at the tenant's share of the limit (half of it beside the flood: a model call every two of the
limit's call intervals, about 190 ms here), not ahead of the flood.`;
}

/** Where the small tenant's time under the flood went: waiting to start, or in its model calls. */
function startText(t: NonNullable<Flow["tenantDetail"]>): string {
  if (t.loadedStartedMs === undefined) return "";
  const calls = (t.loadedModelCallsEndedMs ?? []).map((v) => num(v, 0)).join(" and ");
  const waits =
    t.loadedTurnWaitMs === undefined
      ? ""
      : ` Each of its model calls waited ${num(t.loadedTurnWaitMs, 0)} ms on average for its turn at
the limit (\`yiem_model_limit_wait_seconds{tenant="small"}\`).`;
  return `Under the flood its run started ${num(t.loadedStartedMs, 0)} ms after it was sent (the flood's
runs waiting at the limit lend their run slots, docs/RELIABILITY.md, "Tenants") and its model
calls ended at ${calls} ms.${waits}`;
}
