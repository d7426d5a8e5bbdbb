import { setTimeout as sleep } from "node:timers/promises";
import { type AgentRunSettings, agentRunSettings } from "../../agents/agentRunConfig.js";
import type { OpenedRun } from "../../features/runFeature.js";
import { formatMsgForLLM } from "../../llm/formatMsgForLLM.js";
import { settleStoredAnswer } from "../../loop/outputCheck.js";
import { prepareContext } from "../../loop/prepareContext.js";
import { agentEndEvent, type RunHandoff, runAgentLoop } from "../../loop/runAgentLoop.js";
import { remainingBudget } from "../../loop/runBudget.js";
import { sumRunUsage } from "../../loop/runUsage.js";
import { findUnansweredToolCalls } from "../../loop/unansweredToolCalls.js";
import { markProcessWarm } from "../../ops/processWarm.js";
import { type RunAnswer, runAnswerText } from "../../protocol/coordinatorJob.js";
import { LeaseLostError, RunParkedError, SessionStoreError } from "../../protocol/errors.js";
import type { TakenEvents } from "../../state/eventBatches.js";
import { eventBatchesOf } from "../../state/eventBatches.js";
import { createEventPublisher, type EventPublisher } from "../../state/eventBus.js";
import { PipelinedTranscript } from "../../state/pipelinedTranscript.js";
import type { RunStart, SessionStore } from "../../state/sessionStore.js";
import { inSpan, markSpanError } from "../../tracing/spans.js";
import type {
  AgentEndEvent,
  AgentLoopConfig,
  AssistantMessage,
  PreparedToolCall,
} from "../../types/index.js";
import type { Slot } from "../intake/runSlots.js";
import { DeferredAnswer, type WaitingAnswer } from "./deferredAnswer.js";
import {
  type FeatureRuns,
  openFeatureRuns,
  releaseFeatureHolds,
  runOpeningInFeatures,
  takeAgentInFeatures,
} from "./featureRuns.js";
import { keepLease } from "./leaseKeeper.js";
import { logModelErrors } from "./modelErrorLog.js";
import { watchResumedRunAbort } from "./resumedRunAbort.js";
import {
  type KeptBack,
  type OpenRun,
  publishHeldEvent,
  runEmitter,
  startedBefore,
  unansweredCallIds,
} from "./runEvents.js";
import { createRunExecutor } from "./runExecutor.js";
import { logRunFinished } from "./runSummary.js";
import type { SessionControl, SessionHold, SessionRunnerDeps } from "./sessionHold.js";
import { lendSlotWhileWaiting } from "./slotLending.js";
import { transcriptWriters } from "./transcriptWriters.js";

export { INTERRUPTED_MESSAGE } from "./localCallGuard.js";
export type { SessionControl, SessionRunnerDeps } from "./sessionHold.js";

/**
 * How processing a session ended. `parkedAborted`: its run is parked and was aborted meanwhile
 * (the abort was recorded while no one held it): its calls awaiting approval are to be denied,
 * which resumes it.
 */
export type SessionOutcome = "idle" | "lost" | "handedOver" | "parked" | "parkedAborted";

/** Errors a run must not turn into its response: the session task recovers from them. */
function isRecoverable(err: unknown): boolean {
  return (
    err instanceof LeaseLostError ||
    err instanceof SessionStoreError ||
    err instanceof RunParkedError
  );
}

/**
 * A resumed run whose transcript already ends with the model's final answer (its holder
 * stopped between storing the answer and closing the run): that answer is the response.
 */
function finishedAnswer(hold: SessionHold, start: OpenRun): AssistantMessage | undefined {
  if (start.kind !== "resume") return undefined;
  const last = hold.state.messages.at(-1);
  if (last?.role !== "assistant") return undefined;
  return last.content.some((block) => block.type === "toolCall") ? undefined : last;
}

/** Runs the agent loop in a `yiem.run` span: its LLM and tool-call spans (and the workers') are children. */
function runLoopInSpan(
  start: OpenRun,
  hold: SessionHold,
  loopDeps: Parameters<typeof runAgentLoop>[0],
): Promise<AssistantMessage> {
  const attributes = {
    "yiem.session_id": hold.sessionId,
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

/** The loop settings an agent sets for its runs: turns, structured output, budget. */
function agentLimits(hold: SessionHold, base: AgentLoopConfig): AgentRunSettings {
  return hold.agent ? agentRunSettings(hold.agent.definition, base) : {};
}

/**
 * The model call and loop config of the run's current agent (`hold.agent`): its model call
 * (errors logged with the agent's name), and its turns, structured output and budget over the
 * coordinator's config, with the run's executor; then lowered by the features (`limitConfig`).
 */
async function legOf(
  hold: SessionHold,
  start: OpenRun,
  features: FeatureRuns,
  executor: AgentLoopConfig["executor"],
  requestIds: readonly string[],
): Promise<RunHandoff> {
  const { deps, agent } = hold;
  const logged = logModelErrors(agent?.llmCall ?? deps.llmCall, deps.log, {
    sessionId: hold.sessionId,
    runId: start.runId,
    ...(agent ? { agent: agent.name } : {}),
  });
  const llmCall = hold.slot ? lendSlotWhileWaiting(logged, hold.slot) : logged;
  const config = { ...deps.config, ...agentLimits(hold, deps.config), executor };
  await features.limitConfig(config, requestIds);
  return { llmCall, config };
}

/** The leg a handoff prepared (`switchAgent`), taken once by the loop. */
function takeNextLeg(hold: SessionHold): RunHandoff | undefined {
  const next = hold.nextLeg;
  hold.nextLeg = undefined;
  return next;
}

/** A run's answer, and whether closing it left the session idle (its lease released). */
interface FinishedRunOutcome {
  answer: RunAnswer;
  idle: boolean;
}

async function runOne(hold: SessionHold, start: OpenRun): Promise<FinishedRunOutcome> {
  const { deps, sessionId, state } = hold;
  hold.nextLeg = undefined;
  const runStart =
    start.kind === "new" ? state.messages.length - 1 : (start.from ?? state.messages.length);
  const requestIds = [...start.inputIds];
  let leg: RunHandoff | undefined;
  const opened: OpenedRun = {
    runId: start.runId,
    kind: start.kind,
    abortedAtOpen: start.kind === "new" && start.aborted,
    requestIds,
    runStart,
    store: deps.store,
    treeRoot: () => features.treeRoot ?? { sessionId, runId: start.runId },
    usage: () => sumRunUsage(state.messages.slice(runStart), deps.config.prices),
    reserve: (what) => features.reserve(what),
    // Called once the loop runs, so `leg` is the current agent's (after any handoff).
    remainingBudget: () =>
      remainingBudget(
        leg?.config.budget,
        sumRunUsage(state.messages.slice(runStart), deps.config.prices),
      ),
    switchAgent: async () => {
      await takeAgent(hold);
      leg = await legOf(hold, start, features, executor, requestIds);
      hold.nextLeg = leg;
    },
  };
  const features = await openFeatureRuns(hold.features, opened);
  const controller = new AbortController();
  hold.control.controller = controller;
  const resumedAbort = watchResumedRunAbort(hold, start, features, controller);
  if ((await resumedAbort.check()) && !findUnansweredToolCalls(state.messages)) controller.abort();
  const unanswered = unansweredCallIds(hold, start);
  // A call the run left unanswered is dispatched only if no abort was recorded meanwhile.
  const mayDispatch = async (prep: PreparedToolCall) =>
    !unanswered.has(prep.toolCall.id) || !(await resumedAbort.check());
  const keptBack: KeptBack = { startedBefore: await startedBefore(hold, start, unanswered) };
  const publisher = createEventPublisher(
    deps.command,
    deps.keys,
    { sessionId, runId: start.runId },
    deps.streamCaps,
    features.eventTree,
  );
  const executor = features.wrapExecutor(createRunExecutor(hold, start, unanswered, mayDispatch));
  const transcript = new PipelinedTranscript(sessionId, () => state.messages.length);
  // A root run's answer without tool calls goes with its close (a child run's events are its
  // root's too, which the close does not store).
  const deferred = new DeferredAnswer(features.eventTree === undefined);
  const stored = finishedAnswer(hold, start);
  leg = await legOf(hold, start, features, executor, requestIds);
  const response = stored
    ? await settleStoredAnswer(leg.config, stored)
    : await runLoopInSpan(start, hold, {
        state,
        llmCall: leg.llmCall,
        prepareContext,
        formatMsgForLLM,
        config: leg.config,
        emit: runEmitter(hold, publisher, features, keptBack, deferred),
        signal: controller.signal,
        rethrow: isRecoverable,
        runStart,
        takeHandoff: () => takeNextLeg(hold),
        reserveModelCall: () => features.reserve({ kind: "modelCall" }),
        ...transcriptWriters(hold, start, requestIds, features, transcript, {
          onDrained: (ids) => features.limitConfig(leg?.config ?? {}, ids),
          afterResumedBatch: () => resumedAbort.afterResumedBatch(),
          deferred: {
            answer: deferred,
            publish: (event) => publishHeldEvent(hold, publisher, event),
          },
        }),
      });
  hold.control.controller = undefined;
  await features.beforeFinish();
  // The run's last events go out in the script that closes it, ahead of `agentEnd`.
  const queued = publisher.takeQueued();
  const agentEnd: AgentEndEvent =
    keptBack.agentEnd ??
    agentEndEvent(response, sumRunUsage(state.messages.slice(runStart), deps.config.prices));
  const agent = hold.agent ? { agent: hold.agent.name } : {};
  const sessionUsage = sumRunUsage(state.messages, deps.config.prices); // the list's summary
  const answer: RunAnswer = { response, usage: agentEnd.usage, ...agent };
  const answerText = runAnswerText(answer); // stored by the close, checked behind it
  const run = {
    ...{ runId: start.runId, inputIds: requestIds, event: agentEnd, ...agent },
    ...{ sessionUsage, answerText },
  };
  const closing = deps.onRunClosing?.(requestIds);
  try {
    const closed = await closeRun(hold, transcript, response, run, queued, {
      waiting: deferred.take(),
      publisher,
      sent: () => deps.onRunCloseSent?.(requestIds, answer, answerText),
    });
    await features.afterFinish(run);
    deps.onRunFinished(sessionId, requestIds, answer);
    return { answer, idle: closed === "idle" };
  } finally {
    closing?.();
  }
}

/** What `finishRun` records of a run. */
type FinishedRunRecord = Parameters<SessionStore["finishRun"]>[3];

/**
 * Closes the run (`finishRun`), storing its `queued` events first: they go with the first
 * attempt only (a guard that refused it had stored them already), and are settled with it.
 * A kept-back answer (`deferred.waiting`) is appended by the same script first, and its held
 * events are stored only if the run closes (with every attempt: a refused one stored none).
 * `deferred.sent` is told right after each attempt is sent, before its reply.
 */
async function closeRun(
  hold: SessionHold,
  transcript: PipelinedTranscript,
  response: AssistantMessage,
  run: FinishedRunRecord,
  queued: TakenEvents | undefined,
  deferred: { waiting: WaitingAnswer | undefined; publisher: EventPublisher; sent: () => void },
): Promise<"closed" | "idle"> {
  const { deps, sessionId, token } = hold;
  let writes = queued?.writes ?? [];
  const { waiting, publisher } = deferred;
  const held = waiting?.events.flatMap((event) => publisher.onlyIfClosed(event)) ?? [];
  try {
    const closed = await transcript.write((expect, known) => {
      const first = writes;
      writes = [];
      const close = waiting
        ? deps.store.finishRun(
            sessionId,
            token,
            response,
            run,
            // The answer is in `state.messages` already: the length before it is one less.
            expect === undefined ? undefined : expect - 1,
            [...first, ...held],
            { message: waiting.message, knownLength: known - 1 },
          )
        : deps.store.finishRun(sessionId, token, response, run, expect, first);
      deferred.sent();
      return close;
    });
    queued?.settle();
    return closed;
  } catch (err) {
    // A refused close stored them all the same; only a Redis failure may have lost them.
    queued?.settle(err instanceof SessionStoreError ? err : undefined);
    throw err;
  }
}

/**
 * A session this coordinator just made for a request naming none (`SessionTasks.startFresh`):
 * no transcript, no running calls, and `agent` its agent, so its hold reads none of them.
 */
export interface FreshSession {
  agent: string;
}

/**
 * Works a session the caller holds the lease of: resumes the run in progress if there is
 * one, then opens runs from the inbox one after another, until the inbox is empty and the
 * lease is released. Stops early when the lease is lost or the session is handed over; the
 * open run then stays in Redis for the next holder to resume. Throws `SessionStoreError` when
 * Redis fails under it: the run stays open, and the caller tries again later. `slot`, the
 * run slot the caller works it in, is lent while a model call waits at a shared limit.
 * `fresh`: a session just made here, whose lease's take was sent right before (not yet
 * known to be ours: a lease that is not ends the work as `lost`, its run's opening refused).
 */
export async function processSession(
  deps: SessionRunnerDeps,
  sessionId: string,
  token: string,
  register: (control: SessionControl | undefined) => void,
  slot?: Slot,
  fresh?: FreshSession,
): Promise<SessionOutcome> {
  const hold = newHold(deps, sessionId, token);
  hold.slot = slot;
  hold.control.handOver = async () => {
    hold.handedOver = true;
    await deps.store.release(sessionId, token).catch(() => undefined); // first: no write of ours may land after this
    hold.control.controller?.abort(new LeaseLostError(sessionId));
  };
  // Losing the lease stops the run in progress without cancelling its remote calls: the
  // next holder attaches to them.
  hold.lease.onLost(() => hold.control.controller?.abort(new LeaseLostError(sessionId)));
  register(hold.control);
  try {
    // Read at once, and open the first run right behind the reads, in the same round trip:
    // Redis runs them in the order sent, so the transcript read is the one before the run's
    // opening moved its input in (as when the opening waited for the reads). Only the holder
    // writes them from now on. A fresh session has nothing to read but its agent's definition.
    const reads = Promise.all([
      takeAgent(hold, fresh?.agent),
      fresh ? [] : deps.store.loadMessages(sessionId),
      fresh ? [] : deps.store.loadRunning(sessionId),
    ]);
    const firstStart = openNextRun(hold);
    firstStart.catch(() => undefined); // a failed read throws first; the opening's error is the next one's
    const [, messages, running] = await reads;
    hold.state.messages = messages;
    hold.interrupted = new Set(running);
    // A session without a transcript has no events yet: its run's first events read no stream.
    if (messages.length === 0) eventBatchesOf(deps.command, deps.keys).believeEmpty(sessionId);
    return await workSession(hold, firstStart);
  } finally {
    hold.lease.stop();
    register(undefined);
    releaseFeatureHolds(hold.features);
  }
}

/** A new hold on a session, with each feature's part of it. */
function newHold(deps: SessionRunnerDeps, sessionId: string, token: string): SessionHold {
  const hold: SessionHold = {
    deps,
    sessionId,
    token,
    lease: keepLease(deps.store, sessionId, token, deps.leaseMs),
    handedOver: false,
    interrupted: new Set(),
    state: {
      systemPrompt: deps.systemPrompt,
      tools: deps.toolStore.tools,
      messages: [],
      pendingToolCalls: new Set(),
      activeRun: false,
    },
    control: { controller: undefined, handOver: async () => undefined },
    features: [],
  };
  const session = { sessionId, token, state: hold.state, agent: () => hold.agent, log: deps.log };
  hold.features = deps.features.flatMap((feature) => feature.hold?.(session) ?? []);
  return hold;
}

/**
 * Gives the hold its session's current agent: the agent's prompt and its tools (a live view),
 * then lets every feature add its part (`FeatureHold.takeAgent`: handoff tools, agent calls).
 */
async function takeAgent(hold: SessionHold, known?: string): Promise<void> {
  const found = await hold.deps.agentOf?.(hold.sessionId, known);
  if (!found) return;
  hold.agent = found.agent;
  hold.state.systemPrompt = found.systemPrompt;
  hold.state.tools = found.agent.toolsFrom(hold.deps.toolStore.tools);
  await takeAgentInFeatures(hold.features, found);
}

/**
 * A parked run, no longer held: `parkedAborted` when an abort was recorded for it (a client's
 * request is taken into the run here), so that its calls awaiting approval get denied.
 */
async function parkedOutcome(hold: SessionHold): Promise<SessionOutcome> {
  const aborted = await hold.deps.store.takeAbortRequest(hold.sessionId);
  return aborted ? "parkedAborted" : "parked";
}

/**
 * Reads the transcript (and the calls marked running) again when the stored one is not as long
 * as the holder's copy: the reply of the call that opened the run was lost with a Redis that
 * died right after running it, and ioredis sent the call again, which found the run open. The
 * copy, read before, lacks the input that first call moved in.
 */
async function reloadStaleTranscript(hold: SessionHold, storedLength: number): Promise<void> {
  if (storedLength === hold.state.messages.length) return;
  const { store, log } = hold.deps;
  const [messages, running] = await Promise.all([
    store.loadMessages(hold.sessionId),
    store.loadRunning(hold.sessionId),
  ]);
  log.warn(
    { sessionId: hold.sessionId, held: hold.state.messages.length, stored: messages.length },
    "the stored transcript moved on under the holder's copy (a lost reply); read it again",
  );
  hold.state.messages = messages;
  hold.interrupted = new Set(running);
}

/**
 * Sends the script that opens the session's next run (`startRun`), and the features' reads
 * behind it, in the same round trip (`FeatureHold.runOpening`).
 */
function openNextRun(hold: SessionHold): Promise<RunStart> {
  const start = hold.deps.store.startRun(hold.sessionId, hold.token);
  runOpeningInFeatures(hold.features);
  return start;
}

/**
 * Opens the session's next run: a new or resumed one, or how the session stands instead.
 * `sent`: the opening already sent (the first, right behind the hold's reads).
 */
async function nextRun(
  hold: SessionHold,
  sent?: Promise<RunStart>,
): Promise<OpenRun | SessionOutcome | "again"> {
  const start = await (sent ?? openNextRun(hold));
  if (start.kind === "lost") return hold.handedOver ? "handedOver" : "lost";
  if (start.kind === "parked") return parkedOutcome(hold);
  if (start.kind === "settling") {
    await sleep(start.retryInMs);
    return "again";
  }
  if (start.kind === "resume") await reloadStaleTranscript(hold, start.transcriptLength);
  if (start.kind !== "idle") return start;
  const released = await hold.deps.store.releaseIfIdle(hold.sessionId, hold.token);
  if (released === "released") return "idle";
  if (released === "lost") return hold.handedOver ? "handedOver" : "lost";
  return "again";
}

async function workSession(
  hold: SessionHold,
  firstStart: Promise<RunStart>,
): Promise<SessionOutcome> {
  let sent: Promise<RunStart> | undefined = firstStart;
  for (;;) {
    if (hold.handedOver) return "handedOver";
    if (hold.lease.lost) return "lost";
    const start = await nextRun(hold, sent);
    sent = undefined;
    if (start === "again") continue;
    if (typeof start === "string") return start;
    if (start.kind === "new") hold.state.messages.push(start.message);
    const before = hold.state.messages.length;
    const startedAt = Date.now();
    let finished: FinishedRunOutcome;
    try {
      finished = await runOne(hold, start);
    } catch (err) {
      if (err instanceof RunParkedError) {
        hold.control.controller = undefined;
        if (err.released) return parkedOutcome(hold);
        continue; // every decision came in while the batch ran: resume now
      }
      if (!(err instanceof LeaseLostError)) throw err;
      return hold.handedOver ? "handedOver" : "lost";
    }
    // `turns` and `toolCalls` count what this holder ran (a resumed run's earlier part was its
    // predecessor's); `usage` is the whole run's.
    logRunFinished(hold, start, finished.answer, before, startedAt);
    markProcessWarm(); // a bundled coordinator keeps its compiled code from here on
    // Nothing waited when the run closed: the same step released the lease.
    if (finished.idle) return "idle";
  }
}
