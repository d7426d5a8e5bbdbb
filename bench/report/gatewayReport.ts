/**
 * What the `gateway` scenario leaves: its figures printed, and (it runs only alone) its
 * figures written into the committed `bench/results.json` as `gateway`, every other figure
 * kept, then `docs/PERFORMANCE.md` rendered again. A full run carries the last `gateway`
 * figures over (`readCommittedGateway`).
 */
import { readFile, writeFile } from "node:fs/promises";
import type { Flow } from "../measurements/flow.js";
import type { Gateway } from "../measurements/gateway.js";
import type { GatewayReaders } from "../measurements/gatewayReaders.js";
import type { NewSession } from "../measurements/newSession.js";
import { round, type Summary } from "../sampling/stats.js";
import { textTable } from "./printReport.js";
import { RESULT_FILES, renderFromFiles } from "./resultFiles.js";
import type { BenchResults } from "./results.js";

function row(name: string, s: Summary): string[] {
  return [name, String(s.count), ...[s.p50, s.p90, s.p99, s.max].map((v) => String(round(v, 1)))];
}

/** Prints the gateway scenario's figures. */
export function printGateway(g: Gateway): void {
  const s = g.streams;
  console.log(
    `\n${textTable([
      ["event delivery, publish → client (ms)", "n", "p50", "p90", "p99", "max"],
      row(`every event, ${s.watchers} watchers`, s.delivery),
      row("stored events only", s.deliveryStored),
      row("the same events, one plain subscriber here", s.deliveryDirect),
    ])}\n`,
  );
  console.log(
    `watchers complete ${s.complete}/${s.watchers}, events ${s.events}, out of order ${s.outOfOrder}; ` +
      `Redis clients ${s.redisClientsBefore} → ${s.redisClientsWatching} with the watchers open; ` +
      `Redis commands/s idle ${round(s.redisCommandsPerSIdleBefore, 0)} → ${round(s.redisCommandsPerSIdleWatching, 0)}`,
  );
  console.log(
    `gateway: ${round(s.gatewayCores, 2)} cores, ${round(s.gatewayCpuMsPerEvent * 1000, 1)} µs CPU per event, ` +
      `RSS ${round(s.gatewayRssBeforeMb, 0)} → ${round(s.gatewayRssPeakMb, 0)} MiB; coordinator ${round(s.coordinatorCores, 2)} cores, bench ${round(s.benchCores, 2)}; ` +
      `machine ${round(s.machineBusyCores, 2)}/${s.cores} cores busy`,
  );
  const r = g.runs;
  console.log(
    `\n${textTable([
      ["runs, fresh session each", "runs", "failed", "runs/s", "p50 ms", "p99 ms"],
      ...(
        [
          ["POST /v1/runs?wait=true", r.gateway],
          ["plain BullMQ add + waitUntilFinished", r.bullmq],
        ] as const
      ).map(([name, p]) => [
        name,
        String(p.runs),
        String(p.failed),
        String(round(p.runsPerS, 1)),
        String(round(p.latency.p50, 1)),
        String(round(p.latency.p99, 1)),
      ]),
    ])}`,
  );
  console.log(`gateway ÷ plain BullMQ: ${round(r.ratio, 2)} of the runs/s\n`);
}

async function readCommittedResults(): Promise<BenchResults> {
  return JSON.parse(await readFile(RESULT_FILES.results, "utf8")) as BenchResults;
}

/** The `gateway` figures of the committed `bench/results.json`, if it has them. */
export async function readCommittedGateway(): Promise<Gateway | undefined> {
  return (await readCommittedResults().catch(() => undefined))?.gateway;
}

/** The `gatewayReaders` figures of the committed `bench/results.json`, if it has them. */
export async function readCommittedGatewayReaders(): Promise<GatewayReaders | undefined> {
  return (await readCommittedResults().catch(() => undefined))?.gatewayReaders;
}

/** Writes `g` into `bench/results.json` as `gatewayReaders` and renders `docs/PERFORMANCE.md`. */
export async function writeGatewayReadersResults(g: GatewayReaders): Promise<string[]> {
  const results = { ...(await readCommittedResults()), gatewayReaders: g };
  await writeFile(RESULT_FILES.results, `${JSON.stringify(results, null, 2)}\n`);
  return [RESULT_FILES.results, await renderFromFiles()];
}

/** Prints the stalled-readers scenario's figures. */
export function printGatewayReaders(g: GatewayReaders): void {
  console.log(
    `\n${g.stalled} stalled + ${g.live} live readers (refused ${g.refused}); ${g.largeRunsAnswered}/${g.plan.largeRuns} runs of ${g.plan.answerChars} characters answered; ` +
      `readers cut ${g.readersCut}; live readers complete ${g.liveComplete}/${g.liveOnLargeRuns}, ${round(g.liveReadMb, 0)} MiB read`,
  );
  console.log(
    `gateway RSS ${round(g.gatewayRssBeforeMb, 0)} MiB before the readers, ${round(g.gatewayRssReadersMb, 0)} with them, peak ${round(g.gatewayRssPeakMb, 0)} MiB, ${round(g.gatewayRssEndMb, 0)} MiB at the end`,
  );
  console.log(
    `\n${textTable([
      ["another key's GET /v1/sessions/{id} (ms)", "n", "p50", "p90", "p99", "max"],
      row("during the runs", g.otherKey),
    ])}`,
  );
  console.log(`failed: ${g.otherKeyFailed}\n`);
}

/** Writes `g` into `bench/results.json` and renders `docs/PERFORMANCE.md`; returns the paths. */
export async function writeGatewayResults(g: Gateway): Promise<string[]> {
  const results = { ...(await readCommittedResults()), gateway: g };
  await writeFile(RESULT_FILES.results, `${JSON.stringify(results, null, 2)}\n`);
  return [RESULT_FILES.results, await renderFromFiles()];
}

/** The `newSession` figures of the committed `bench/results.json`, if it has them. */
export async function readCommittedNewSession(): Promise<NewSession | undefined> {
  return (await readCommittedResults().catch(() => undefined))?.newSession;
}

/** Writes `n` into `bench/results.json` as `newSession` and renders `docs/PERFORMANCE.md`. */
export async function writeNewSessionResults(n: NewSession): Promise<string[]> {
  const results = { ...(await readCommittedResults()), newSession: n };
  await writeFile(RESULT_FILES.results, `${JSON.stringify(results, null, 2)}\n`);
  return [RESULT_FILES.results, await renderFromFiles()];
}

/** Prints the new-session scenario's figures. */
export function printNewSession(n: NewSession): void {
  console.log(
    `\n${textTable([
      ["requests waiting", "hasSession (commands)", "hasSession + send (commands)"],
      ...n.at.map((at) => [
        String(at.backlog),
        String(round(at.hasSessionCommands, 1)),
        String(round(at.commandsPerRequest, 1)),
      ]),
    ])}\n`,
  );
}

/** The `flow` figures of the committed `bench/results.json`, if it has them. */
export async function readCommittedFlow(): Promise<Flow | undefined> {
  return (await readCommittedResults().catch(() => undefined))?.flow;
}

/** Writes `f` into `bench/results.json` as `flow` and renders `docs/PERFORMANCE.md`. */
export async function writeFlowResults(f: Flow): Promise<string[]> {
  const results = { ...(await readCommittedResults()), flow: f };
  await writeFile(RESULT_FILES.results, `${JSON.stringify(results, null, 2)}\n`);
  return [RESULT_FILES.results, await renderFromFiles()];
}

/** Prints the flow scenario's figures against their targets. */
export function printFlow(f: Flow): void {
  const d = f.detail;
  console.log(
    `\n${textTable([
      ["figure", "value", "target"],
      ["flowLimitUsedPct", String(round(f.flowLimitUsedPct, 1)), "≥ 90"],
      ["flow429Pct", String(round(f.flow429Pct, 2)), "≤ 1"],
      ["flowRunsFailed", String(f.flowRunsFailed), "0"],
      ["flowSmallTenantRatio", String(round(f.flowSmallTenantRatio ?? Number.NaN, 2)), "≤ 2"],
      ["flowBudgetOverrun", String(f.flowBudgetOverrun ?? "n/a"), "0"],
    ])}`,
  );
  const t = f.tenantDetail;
  if (t)
    console.log(
      `small tenant: ${round(t.unloadedMs, 0)} ms alone, ${round(t.loadedMs, 0)} ms behind a flood of ${t.flood} runs ` +
        `(started at ${round(t.loadedStartedMs ?? Number.NaN, 0)} ms, model calls ended at ${(t.loadedModelCallsEndedMs ?? []).map((v) => round(v, 0)).join(", ")} ms, each waited ${round(t.loadedTurnWaitMs ?? Number.NaN, 0)} ms for its turn); ` +
        `the capped tenant's runs made ${f.budgetCallsMade} model calls (budget ${f.plan.budgetCalls})`,
    );
  console.log(
    `${d.modelRequests} model requests, ${d.refused} answered 429 (the coordinators counted ${d.refusedSeenByCoordinators}); ` +
      `${d.tokensInLoadedWindows} tokens in ${d.loadedWindows} whole windows; calls by coordinator ${d.callsByCoordinator.join(" + ")}; ` +
      `mean wait for a turn ${round(d.meanWaitS, 2)} s; ${round(d.wallS, 1)} s from the first request to the last answer\n`,
  );
}
