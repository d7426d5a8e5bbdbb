import { setTimeout as sleep } from "node:timers/promises";
import type { Queue } from "bullmq";
import type { AgentState } from "../../agent/agentState.js";
import { prepareContext } from "../../agent/prepareContext.js";
import { runAgentLoop } from "../../agent/runAgentLoop.js";
import { findUnansweredToolCalls } from "../../agent/unansweredToolCalls.js";
import { formatMsgForLLM } from "../../llm/formatMsgForLLM.js";
import type { Logger } from "../../ops/logger.js";
import { LeaseLostError, RunParkedError, SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { ApprovalStore } from "../../state/approvalStore.js";
import {
  createEventPublisher,
  type EventPublisher,
  readEventsAfter,
} from "../../state/eventBus.js";
import { PipelinedTranscript } from "../../state/pipelinedTranscript.js";
import type { RunStart, SessionStore } from "../../state/sessionStore.js";
import { readToolDone } from "../../state/toolDoneMarkers.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type { ToolStore } from "../../tools/toolStore.js";
import { inSpan, markSpanError } from "../../tracing/spans.js";
import type {
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AssistantMessage,
  ExecutedOutcome,
  LlmCall,
  PreparedToolCall,
  UserMessage,
} from "../../types/index.js";
import { type ApprovalExecutor, createApprovalExecutor } from "./approvalExecutor.js";
import { keepLease, type LeaseKeeper } from "./leaseKeeper.js";
import { logModelErrors } from "./modelErrorLog.js";
import { createRemoteExecutor } from "./remoteExecutor.js";
import type { ResultWaiter } from "./resultWaiter.js";
import { summarizeRun } from "./runSummary.js";

/** What the coordinator lends every session it runs. */
export interface SessionRunnerDeps {
  store: SessionStore;
  /** Calls awaiting approval, their decisions, and the parked batch's other outcomes. */
  approvals: ApprovalStore;
  /** Deny a call awaiting approval on its own after this long (a tool's own timeout wins). */
  approvalTimeoutMs?: number;
  command: RedisClient;
  keys: ClusterKeys;
  leaseMs: number;
  llmCall: LlmCall;
  toolStore: ToolStore;
  systemPrompt: string;
  /** How runs behave (the coordinator's options); each run adds its own executor. */
  config: Omit<AgentLoopConfig, "executor">;
  queueFor: (queue: string | undefined, sessionId: string) => Promise<Queue>;
  waiter: ResultWaiter;
  log: Logger;
  /** Sees every event the coordinator publishes (metrics). */
  observe?: (event: AgentEvent) => void;
  /** Picks up tools written elsewhere (writeTool); called before every LLM call. */
  syncWrittenTools?: () => Promise<unknown>;
  /** Told each time a run's response is stored, with the inputs it answers. */
  onRunFinished?: (sessionId: string, inputIds: string[], response: AssistantMessage) => void;
}

/** One held session: how the coordinator aborts or hands over its current run. */
export interface HeldSession {
  controller: AbortController | undefined;
  handOver(): Promise<void>;
}

/** How processing a session ended. */
export type SessionOutcome = "idle" | "lost" | "handedOver" | "parked";

/** The text a non-idempotent in-process call gets when a coordinator died while it ran. */
export const INTERRUPTED_MESSAGE = "interrupted: the coordinator stopped while this call ran";

/** The text of an in-process call a holder did not start because it had lost the session. */
const NOT_HOLDER_MESSAGE =
  "not run: this coordinator lost the session; its next holder runs or reports this call";

/**
 * Before a call runs in this process: a call a dead predecessor was running is run again
 * only when its tool is idempotent; otherwise it gets the "interrupted" error result and the
 * model decides. Every call that does run is marked first, under the lease, so a successor
 * can tell; a holder whose lease is gone (another coordinator may be running this call) does
 * not run it, and its error result never lands (its next transcript write is fenced out).
 */
async function guardLocalCall(
  h: Holding,
  prep: PreparedToolCall,
): Promise<ExecutedOutcome | undefined> {
  const id = prep.toolCall.id;
  if (h.interrupted.has(id) && !prep.tool.idempotent) {
    return { result: createErrorToolResult(INTERRUPTED_MESSAGE), isError: true };
  }
  if (!(await h.deps.store.markRunning(h.sessionId, h.token, id))) {
    return { result: createErrorToolResult(NOT_HOLDER_MESSAGE), isError: true };
  }
  return undefined;
}

interface Holding {
  /** Calls a previous holder was running in its own process when it stopped. */
  interrupted: Set<string>;
  deps: SessionRunnerDeps;
  sessionId: string;
  token: string;
  lease: LeaseKeeper;
  state: AgentState;
  handedOver: boolean;
  held: HeldSession;
}

/**
 * Publishes a run's events while the session is ours (never after losing or handing it
 * over, so a watcher sees each call end once, from the holder that finished it); a remote
 * call's end event names its worker itself. Holds `agentEnd` back for the caller. Streamed
 * text (`messageUpdate`) goes out live only: the replay stream gets the whole message once,
 * in its `messageEnd`.
 */
function runEmitter(
  h: Holding,
  publisher: EventPublisher,
  executor: ApprovalExecutor,
  held: { end?: AgentEvent; started: Set<string> },
) {
  return (event: AgentEvent): Promise<void> => {
    // A holder that lost or handed over the session stays silent: the next holder reports.
    if (h.lease.lost || h.handedOver) return Promise.resolve();
    // A call left waiting for approval has not ended; one answered from a parked batch's
    // store had its end published before the run parked.
    if (
      event.type === "toolExecEnd" &&
      (executor.parked.has(event.toolCallId) || executor.reused.delete(event.toolCallId))
    )
      return Promise.resolve();
    h.deps.observe?.(event);
    if (event.type === "agentEnd") {
      held.end = event;
      return Promise.resolve();
    }
    if (event.type === "messageUpdate") return publisher.emitLive(event);
    // A resumed call whose start a previous holder already published is not started twice.
    if (event.type === "toolExecStart" && held.started.delete(event.toolCallId))
      return Promise.resolve();
    return publisher.emit(event);
  };
}

/** On resume: the ids of the calls the run left unanswered (a previous holder may have run them). */
function unansweredCallIds(h: Holding, start: OpenRun): Set<string> {
  const pending = start.kind === "resume" ? findUnansweredToolCalls(h.state.messages) : undefined;
  return new Set(pending?.calls.map((call) => call.id));
}

/** On resume: the `unanswered` calls of this run whose `toolExecStart` a previous holder published. */
async function startedBefore(
  h: Holding,
  start: OpenRun,
  unanswered: Set<string>,
): Promise<Set<string>> {
  if (unanswered.size === 0) return new Set();
  const events = await readEventsAfter(h.deps.command, h.deps.keys, h.sessionId, 0);
  const started = events.filter((e) => e.type === "toolExecStart" && e.runId === start.runId);
  return new Set(
    started.flatMap((e) =>
      "toolCallId" in e && unanswered.has(e.toolCallId) ? [e.toolCallId] : [],
    ),
  );
}

/** Errors a run must not turn into its response: the session task recovers from them. */
function isRecoverable(err: unknown): boolean {
  return (
    err instanceof LeaseLostError ||
    err instanceof SessionStoreError ||
    err instanceof RunParkedError
  );
}

/**
 * Instead of appending a batch that has calls awaiting approval: stores its other outcomes
 * and parks the run (releasing the lease), then stops the loop with `RunParkedError`.
 */
async function parkRun(h: Holding, executor: ApprovalExecutor): Promise<never> {
  const { deps, sessionId, token } = h;
  let parked: Awaited<ReturnType<ApprovalStore["park"]>>;
  try {
    parked = await deps.approvals.park(sessionId, token, executor.finished);
  } catch (err) {
    throw new SessionStoreError(sessionId, err);
  }
  if (parked === "lost") throw new LeaseLostError(sessionId);
  throw new RunParkedError(sessionId, parked === "parked");
}

/**
 * Before a run that parked or decided calls is closed: forgets its batches' approvals (as
 * appending a decided batch does), so none outlives the run when that step was cut short (a
 * holder killed between appending the batch and forgetting them, whose successor finds the
 * answer already in the transcript). A Redis failure stops the run before it closes, to be
 * resumed and forgotten again.
 */
async function forgetApprovals(h: Holding): Promise<void> {
  try {
    await h.deps.approvals.clear(h.sessionId);
  } catch (err) {
    throw new SessionStoreError(h.sessionId, err);
  }
}

/**
 * A resumed run whose transcript already ends with the model's final answer (its holder
 * stopped between storing the answer and closing the run): that answer is the response.
 */
function finishedAnswer(h: Holding, start: OpenRun): AssistantMessage | undefined {
  if (start.kind !== "resume") return undefined;
  const last = h.state.messages.at(-1);
  if (last?.role !== "assistant") return undefined;
  return last.content.some((block) => block.type === "toolCall") ? undefined : last;
}

type OpenRun = Extract<RunStart, { kind: "new" | "resume" }>;

/**
 * The loop's view of the session's transcript: every write goes to Redis first, fenced. A
 * batch's results are appended without waiting for the reply; the next write goes right
 * behind them, guarded (`PipelinedTranscript`). A batch with calls awaiting approval is not
 * appended: the run parks (`parkRun`).
 */
function transcriptWriters(
  h: Holding,
  start: OpenRun,
  inputIds: string[],
  executor: ApprovalExecutor,
  transcript: PipelinedTranscript,
  afterResumedBatch?: () => void,
) {
  let onAppended = afterResumedBatch;
  const { deps, sessionId, token, state } = h;
  let opening: UserMessage[] = start.kind === "new" ? [start.message] : [];
  return {
    drainInput: async () => {
      await deps.syncWrittenTools?.();
      const drained = await transcript.write((expect) =>
        deps.store.drainInputs(sessionId, token, expect),
      );
      inputIds.push(...drained.inputIds);
      const moved = [...opening, ...drained.messages];
      opening = []; // the opening message is in the transcript already (startRun put it there)
      state.messages.push(...drained.messages);
      return moved;
    },
    appendMessages: async (messages: AgentMessage[]) => {
      await transcript.settle();
      if (executor.parked.size > 0) await parkRun(h, executor);
      transcript.appendBehind((expect) =>
        deps.store.appendMany(sessionId, token, messages, expect),
      );
      state.messages.push(...messages);
      executor.finished.clear();
      onAppended?.();
      onAppended = undefined;
      if (!executor.touched()) return;
      // The stored outcomes of a parked batch go only once its results are surely appended.
      await transcript.settle();
      await deps.approvals.clear(sessionId).catch(() => undefined); // stale entries are harmless
    },
    appendMessage: async (message: AgentMessage) => {
      await transcript.write((expect) => deps.store.append(sessionId, token, message, expect));
      state.messages.push(message);
    },
  };
}

/**
 * Stops a resumed run that was aborted while no one held it (parked for approval, or its
 * holder gone; `markRunAborted`). The calls it left unanswered get their results first
 * (stored outcomes, denials, their jobs' ends): the returned callback aborts the run once
 * that batch is appended. With none left, the run is aborted at once.
 */
async function abortIfAbortedMeanwhile(
  h: Holding,
  start: OpenRun,
  controller: AbortController,
): Promise<(() => void) | undefined> {
  if (start.kind !== "resume" || !(await h.deps.store.isRunAborted(h.sessionId))) return undefined;
  h.deps.log.info({ sessionId: h.sessionId, runId: start.runId }, "resumed run was aborted");
  const abort = () => controller.abort();
  if (findUnansweredToolCalls(h.state.messages)) return abort;
  abort();
  return undefined;
}

/** Runs the agent loop in a `yiem.run` span: its LLM and tool-call spans (and the workers') are children. */
function runLoopInSpan(
  h: Holding,
  start: OpenRun,
  loopDeps: Parameters<typeof runAgentLoop>[0],
): Promise<AssistantMessage> {
  const attributes = {
    "yiem.session_id": h.sessionId,
    "yiem.run_id": start.runId,
    "yiem.resumed": start.kind === "resume",
  };
  return inSpan("yiem.run", { attributes }, async (span) => {
    const response = await runAgentLoop(loopDeps);
    span.setAttribute("yiem.stop_reason", response.stopReason);
    if (response.stopReason === "error") markSpanError(span, response.errorMessage ?? "run failed");
    return response;
  });
}

async function runOne(h: Holding, start: OpenRun): Promise<AssistantMessage> {
  const { deps, sessionId, token, state } = h;
  const inputIds = [...start.inputIds];
  const controller = new AbortController();
  h.held.controller = controller;
  const afterResumedBatch = await abortIfAbortedMeanwhile(h, start, controller);
  const unanswered = unansweredCallIds(h, start);
  const started = await startedBefore(h, start, unanswered);
  const held = { end: undefined as AgentEvent | undefined, started };
  const publisher = createEventPublisher(deps.command, deps.keys, {
    sessionId,
    runId: start.runId,
  });
  const remote = createRemoteExecutor({
    sessionId,
    runId: start.runId,
    queueFor: deps.queueFor,
    waiter: deps.waiter,
    beforeLocalCall: (prep) => guardLocalCall(h, prep),
    readFinished: async (prep, jobId) =>
      unanswered.has(prep.toolCall.id) ? readToolDone(deps.command, deps.keys, jobId) : undefined,
  });
  const executor = createApprovalExecutor(remote, {
    approvals: deps.approvals,
    sessionId,
    runId: start.runId,
    token,
    defaultTimeoutMs: deps.approvalTimeoutMs,
    stored: start.kind === "resume" ? await deps.approvals.storedOutcomes(sessionId) : new Map(),
  });
  const transcript = new PipelinedTranscript(sessionId, () => state.messages.length);
  const response =
    finishedAnswer(h, start) ??
    (await runLoopInSpan(h, start, {
      state,
      llmCall: logModelErrors(deps.llmCall, deps.log, { sessionId, runId: start.runId }),
      prepareContext,
      formatMsgForLLM,
      config: { ...deps.config, executor },
      emit: runEmitter(h, publisher, executor, held),
      signal: controller.signal,
      rethrow: isRecoverable,
      ...transcriptWriters(h, start, inputIds, executor, transcript, afterResumedBatch),
    }));
  h.held.controller = undefined;
  if (start.kind === "resume" || executor.touched()) await forgetApprovals(h);
  await publisher.flush();
  const agentEnd: AgentEvent = held.end ?? { type: "agentEnd", response };
  const run = { runId: start.runId, inputIds, event: agentEnd };
  await transcript.write((expect) => deps.store.finishRun(sessionId, token, response, run, expect));
  deps.onRunFinished?.(sessionId, inputIds, response);
  return response;
}

/**
 * Works a session the caller holds the lease of: resumes the run in progress if there is
 * one, then opens runs from the inbox one after another, until the inbox is empty and the
 * lease is released. Stops early when the lease is lost or the session is handed over; the
 * open run then stays in Redis for the next holder to resume. Throws `SessionStoreError` when
 * Redis fails under it: the run stays open, and the caller tries again later.
 */
export async function processSession(
  deps: SessionRunnerDeps,
  sessionId: string,
  token: string,
  register: (held: HeldSession | undefined) => void,
): Promise<SessionOutcome> {
  const lease = keepLease(deps.store, sessionId, token, deps.leaseMs);
  const h: Holding = {
    deps,
    sessionId,
    token,
    lease,
    handedOver: false,
    interrupted: new Set(),
    state: {
      systemPrompt: deps.systemPrompt,
      tools: deps.toolStore.tools,
      messages: [],
      pendingToolCalls: new Set(),
      activeRun: false,
    },
    held: { controller: undefined, handOver: async () => undefined },
  };
  h.held.handOver = async () => {
    h.handedOver = true;
    await deps.store.release(sessionId, token).catch(() => undefined); // first: no write of ours may land after this
    h.held.controller?.abort(new LeaseLostError(sessionId));
  };
  // Losing the lease stops the run in progress without cancelling its remote calls: the
  // next holder attaches to them.
  lease.onLost(() => h.held.controller?.abort(new LeaseLostError(sessionId)));
  register(h.held);
  try {
    h.state.messages = await deps.store.loadMessages(sessionId);
    h.interrupted = new Set(await deps.store.loadRunning(sessionId));
    return await workSession(h);
  } finally {
    lease.stop();
    register(undefined);
  }
}

async function workSession(h: Holding): Promise<SessionOutcome> {
  for (;;) {
    if (h.handedOver) return "handedOver";
    if (h.lease.lost) return "lost";
    const start = await h.deps.store.startRun(h.sessionId, h.token);
    if (start.kind === "lost") return h.handedOver ? "handedOver" : "lost";
    if (start.kind === "parked") return "parked";
    if (start.kind === "settling") {
      await sleep(start.retryInMs);
      continue;
    }
    if (start.kind === "idle") {
      const released = await h.deps.store.releaseIfIdle(h.sessionId, h.token);
      if (released === "released") return "idle";
      if (released === "lost") return h.handedOver ? "handedOver" : "lost";
      continue;
    }
    if (start.kind === "new") h.state.messages.push(start.message);
    const before = h.state.messages.length;
    const startedAt = Date.now();
    let response: AssistantMessage;
    try {
      response = await runOne(h, start);
    } catch (err) {
      if (err instanceof RunParkedError) {
        h.held.controller = undefined;
        if (err.released) return "parked";
        continue; // every decision came in while the batch ran: resume now
      }
      if (!(err instanceof LeaseLostError)) throw err;
      return h.handedOver ? "handedOver" : "lost";
    }
    // Counted from what this holder ran: a resumed run's earlier part was its predecessor's.
    h.deps.log.info(
      {
        sessionId: h.sessionId,
        runId: start.runId,
        ...summarizeRun(h.state.messages.slice(before)),
        durationMs: Date.now() - startedAt,
        stopReason: response.stopReason,
        ...(start.kind === "resume" ? { resumed: true } : {}),
      },
      "run finished",
    );
  }
}
