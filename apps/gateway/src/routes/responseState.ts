import type { PendingApproval } from "@yiem/core";
import { GatewayError, notFound } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { awaitingOf } from "./chatCompletions.js";
import { followRun } from "./followRun.js";
import { awaitedCalls } from "./parkedRun.js";
import { ResponseFold, type ResponseRun } from "./responseFold.js";
import { responseIdOf, runIdOfResponse } from "./responseItems.js";
import { isVisibleSession } from "./sessionAccess.js";

/**
 * The run response `responseId` stands for, from its durable record (any gateway reads it, a
 * day after it was submitted): a 404 when the id names no run a gateway submitted, or one of
 * a session `key` may not see (the same answer either way).
 */
export async function expectVisibleResponse(
  services: GatewayServices,
  key: GatewayKey,
  responseId: string,
): Promise<ResponseRun> {
  const runId = runIdOfResponse(responseId);
  const record = runId === undefined ? undefined : await services.store.readRun(runId);
  if (!runId || !record || !(await isVisibleSession(services, key, record.sessionId))) {
    throw notFound("response", responseId);
  }
  const agent = record.agent ?? (await services.store.agentOf(record.sessionId)) ?? "default";
  return {
    runId,
    sessionId: record.sessionId,
    agent,
    afterSeq: record.afterSeq ?? 0,
    createdAt: record.createdAt ?? Date.now(),
  };
}

/**
 * What the `yiem` extension says of a response whose run waits for a person's decision: the
 * calls (as the chat completions face names them) and how to decide them.
 */
export function awaitingResponseOf(run: ResponseRun, pending: PendingApproval[]) {
  return {
    ...awaitingOf(run, pending),
    decide: `POST /v1/approvals with { sessionId, toolCallId, approved } for each call (a key with the approve scope); the run then resumes, and the response is at GET /v1/responses/${responseIdOf(run.runId)}`,
  };
}

/**
 * The response as it stands now, rebuilt from the run's stored events (no gateway keeps it):
 * the events read up to the session's latest, then, for a run that has not ended, whether it
 * waits for a decision (`incomplete`, `awaiting_approval`) or the coordinators refused it
 * (`failed`); else `queued` until it starts, then `in_progress`.
 */
export async function readResponse(services: GatewayServices, run: ResponseRun) {
  const latest = await services.store.latestEventSeq(run.sessionId);
  const fold = new ResponseFold(run, { liveAfter: latest }); // no live text: what is stored
  if (latest > run.afterSeq) await replayStored(services, run, latest, fold);
  if (fold.ended) return fold.snapshot();
  const pending = await awaitedCalls(services, run.sessionId);
  if (pending.length > 0) {
    fold.markAwaiting(awaitingResponseOf(run, pending));
    return fold.snapshot();
  }
  const refusal = await services.client.requestRefusal(run.runId);
  if (refusal !== undefined) fold.fail("run_refused", refusal);
  return fold.snapshot();
}

/** Adds the run's stored events up to `latest` to `fold` (and any live text read meanwhile). */
async function replayStored(
  services: GatewayServices,
  run: ResponseRun,
  latest: number,
  fold: ResponseFold,
): Promise<void> {
  const stop = new AbortController();
  const saw = (seq: number) => {
    if (seq >= latest) stop.abort();
  };
  try {
    for await (const event of followRun(services, run, run.afterSeq, stop.signal, saw)) {
      fold.add(event);
    }
  } catch (err) {
    if (!(err instanceof GatewayError) || err.code !== "run_refused") throw err;
    fold.fail("run_refused", err.message);
  }
}
