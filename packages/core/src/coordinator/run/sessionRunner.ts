import { setTimeout as sleep } from "node:timers/promises";
import type { Queue } from "bullmq";
import type { AgentState } from "../../loop/agentState.js";
import { settleStoredAnswer } from "../../loop/outputCheck.js";
import { prepareContext } from "../../loop/prepareContext.js";
import { agentEndEvent, type RunHandoff, runAgentLoop } from "../../loop/runAgentLoop.js";
import { remainingBudget } from "../../loop/runBudget.js";
import { sumRunUsage } from "../../loop/runUsage.js";
import { findUnansweredToolCalls } from "../../loop/unansweredToolCalls.js";
import { withAgentCallTools } from "../../features/childRuns/agentCallTools.js";
import type { ServedAgent } from "../../agents/agentRegistry.js";
import {
  type AgentRunSettings,
  agentRunSettings,
  lowerBudget,
} from "../../agents/agentRunConfig.js";
import {
  findHandoff,
  HandoffToolView,
  type TransferFn,
  transferredText,
} from "../../features/handoffs/handoffTools.js";
import { formatMsgForLLM } from "../../llm/formatMsgForLLM.js";
import type { Logger } from "../../ops/logger.js";
import { logToolError } from "../../ops/toolErrorLog.js";
import type { CoordinatorJobData, RunAnswer } from "../../protocol/coordinatorJob.js";
import { LeaseLostError, RunParkedError, SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { ApprovalStore } from "../../features/approvals/approvalStore.js";
import type { ChildRunStore } from "../../features/childRuns/childRunStore.js";
import {
  createEventPublisher,
  type EventPublisher,
  type EventTree,
  publishEvent,
  readEventsAfter,
  type StreamCaps,
} from "../../state/eventBus.js";
import { readInputBudgets } from "../../features/budgets/inputBudgets.js";
import { PipelinedTranscript } from "../../state/pipelinedTranscript.js";
import type { RunStart, SessionStore } from "../../state/sessionStore.js";
import { readToolDone } from "../../state/toolDoneMarkers.js";
import { ABORTED_MESSAGE } from "../../tools/prepareToolCall.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type { ToolStore } from "../../tools/toolStore.js";
import { inSpan, markSpanError } from "../../tracing/spans.js";
import type {
  AgentEndEvent,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AssistantMessage,
  ExecutedOutcome,
  LlmCall,
  PreparedToolCall,
  RunBudget,
  UserMessage,
} from "../../types/index.js";
import { type ApprovalExecutor, createApprovalExecutor } from "../../features/approvals/approvalExecutor.js";
import { type ChildCallOptions, startChildCall, type TreePlace } from "../../features/childRuns/childCalls.js";
import { keepLease, type LeaseKeeper } from "./leaseKeeper.js";
import { logModelErrors } from "./modelErrorLog.js";
import { createRemoteExecutor } from "./remoteExecutor.js";
import type { ResultWaiter } from "./resultWaiter.js";
import { summarizeRun } from "./runSummary.js";
import type { SessionAgent } from "./sessionAgent.js";
import type { WorkerOnlyTool } from "./toolPlacement.js";

/** What the coordinator lends every session it runs. */
export interface SessionRunnerDeps {
  store: SessionStore;
  /** Calls awaiting approval, their decisions, and the parked batch's other outcomes. */
  approvals: ApprovalStore;
  /** Deny a call awaiting approval on its own after this long (a tool's own timeout wins). */
  approvalTimeoutMs?: number;
  command: RedisClient;
  keys: ClusterKeys;
  /** How the session's replay stream is capped (the events the runs publish). */
  streamCaps?: StreamCaps;
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
  /** Says which tools are worker-only (announced by workers; see `placeToolCall`). */
  workerOnly?: (tool: AgentTool) => WorkerOnlyTool | undefined;
  /**
   * The agent of a session (its prompt, model call, tools, turn cap). Without it, every
   * session runs with `systemPrompt`, `llmCall` and every tool of `toolStore`.
   */
  agentOf?: (sessionId: string) => Promise<SessionAgent>;
  /** Told each time a run's response is stored, with the inputs it answers. */
  onRunFinished?: (sessionId: string, inputIds: string[], answer: RunAnswer) => void;
  /**
   * Agents calling agents: the tree's store, how deep a tree may grow (`YIEM_MAX_AGENT_DEPTH`)
   * and how a child run's request is added to the coordinator queue. Without them, an agent's
   * `agents` are not offered.
   */
  childRuns?: {
    store: ChildRunStore;
    /**
     * False when no agent this coordinator serves calls another: then no session it holds is
     * a child, and a hold reads no parent (one Redis round trip less per hold).
     */
    callsAgents: boolean;
    maxDepth: number;
    submit: (data: CoordinatorJobData, jobId: string) => Promise<void>;
  };
}

/** How the coordinator aborts or hands over the current run of a session it holds. */
export interface SessionControl {
  controller: AbortController | undefined;
  handOver(): Promise<void>;
}

/**
 * How processing a session ended. `parkedAborted`: its run is parked and was aborted meanwhile
 * (the abort was recorded while no one held it): its calls awaiting approval are to be denied,
 * which resumes it.
 */
export type SessionOutcome = "idle" | "lost" | "handedOver" | "parked" | "parkedAborted";

/** The text a non-idempotent in-process call gets when a coordinator died while it ran. */
export const INTERRUPTED_MESSAGE = "interrupted: the coordinator stopped while this call ran";

/** The text of an in-process call a holder did not start because it had lost the session. */
const NOT_HOLDER_MESSAGE =
  "not run: this coordinator lost the session; its next holder runs or reports this call";

/**
 * Before a call runs in this process: a call a dead predecessor was running is run again
 * only when its tool is idempotent; otherwise it gets the "interrupted" error result and the
 * model decides. A call of a run aborted before it starts (`mayDispatch` says no) gets the
 * aborted result. Every call that does run is marked first, under the lease, so a successor
 * can tell; a holder whose lease is gone (another coordinator may be running this call) does
 * not run it, and its error result never lands (its next transcript write is fenced out).
 */
async function guardLocalCall(
  hold: SessionHold,
  prep: PreparedToolCall,
  mayDispatch: (prep: PreparedToolCall) => Promise<boolean>,
): Promise<ExecutedOutcome | undefined> {
  const id = prep.toolCall.id;
  if (hold.interrupted.has(id) && !prep.tool.idempotent) {
    return { result: createErrorToolResult(INTERRUPTED_MESSAGE), isError: true };
  }
  if (!(await mayDispatch(prep))) {
    return { result: createErrorToolResult(ABORTED_MESSAGE), isError: true };
  }
  if (!(await hold.deps.store.markRunning(hold.sessionId, hold.token, id))) {
    return { result: createErrorToolResult(NOT_HOLDER_MESSAGE), isError: true };
  }
  return undefined;
}

/** This coordinator's hold on a session: its lease and token, the transcript as the loop sees it. */
interface SessionHold {
  /** Calls a previous holder was running in its own process when it stopped. */
  interrupted: Set<string>;
  deps: SessionRunnerDeps;
  sessionId: string;
  token: string;
  lease: LeaseKeeper;
  state: AgentState;
  handedOver: boolean;
  /** Registered with the session tasks, for aborts and hand-over. */
  control: SessionControl;
  /** The agent the session belongs to (`SessionRunnerDeps.agentOf`); a handoff changes it. */
  agent?: ServedAgent;
  /** The agents `agent` may hand off to (`SessionAgent.handoffs`). */
  handoffs?: readonly string[];
  /** The target of the current batch's first `transfer_to_` call, while that batch runs. */
  batchHandoff?: string;
  /** How the run goes on after its last batch handed it over, until the loop takes it. */
  nextLeg?: RunHandoff;
  /** The agents the session's agent may call, by name (offered as `agent__<name>`). */
  callees: Map<string, ServedAgent>;
  /** Where the session stands in its tree of agents. */
  place: TreePlace;
}

/** What a run's emitter keeps back instead of publishing. */
interface KeptBack {
  /** The run's `agentEnd`, for the caller to publish with the response (`finishRun`). */
  agentEnd?: AgentEndEvent;
  /** Resumed calls whose `toolExecStart` a previous holder published: not published twice. */
  startedBefore: Set<string>;
}

/** `agentStart` with the name of the session's agent; any other event as it is. */
function namedAgentStart(event: AgentEvent, agent: ServedAgent | undefined): AgentEvent {
  return event.type === "agentStart" && agent ? { ...event, agent: agent.name } : event;
}

/**
 * Publishes a run's events while the session is ours (never after losing or handing it
 * over, so a watcher sees each call end once, from the holder that finished it); a remote
 * call's end event names its worker itself. Holds `agentEnd` back for the caller. Streamed
 * text (`messageUpdate`) goes out live only: the replay stream gets the whole message once,
 * in its `messageEnd`.
 */
function runEmitter(
  hold: SessionHold,
  publisher: EventPublisher,
  executor: ApprovalExecutor,
  keptBack: KeptBack,
) {
  return (emitted: AgentEvent): Promise<void> => {
    const event = namedAgentStart(emitted, hold.agent);
    // A holder that lost or handed over the session stays silent: the next holder reports.
    if (hold.lease.lost || hold.handedOver) return Promise.resolve();
    // A call left waiting for approval has not ended; one answered from a parked batch's
    // store had its end published before the run parked.
    if (
      event.type === "toolExecEnd" &&
      (executor.parked.has(event.toolCallId) || executor.reused.delete(event.toolCallId))
    )
      return Promise.resolve();
    hold.deps.observe?.(event);
    if (event.type === "agentEnd") {
      keptBack.agentEnd = event;
      return Promise.resolve();
    }
    if (event.type === "messageUpdate") return publisher.emitLive(event);
    // A resumed call whose start a previous holder already published is not started twice.
    if (event.type === "toolExecStart" && keptBack.startedBefore.delete(event.toolCallId))
      return Promise.resolve();
    return publisher.emit(event);
  };
}

/** On resume: the ids of the calls the run left unanswered (a previous holder may have run them). */
function unansweredCallIds(hold: SessionHold, start: OpenRun): Set<string> {
  const pending =
    start.kind === "resume" ? findUnansweredToolCalls(hold.state.messages) : undefined;
  return new Set(pending?.calls.map((call) => call.id));
}

/** On resume: the `unanswered` calls of this run whose `toolExecStart` a previous holder published. */
async function startedBefore(
  hold: SessionHold,
  start: OpenRun,
  unanswered: Set<string>,
): Promise<Set<string>> {
  if (unanswered.size === 0) return new Set();
  const events = await readEventsAfter(hold.deps.command, hold.deps.keys, hold.sessionId, 0);
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
async function parkRun(hold: SessionHold, executor: ApprovalExecutor): Promise<never> {
  const { deps, sessionId, token } = hold;
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
async function forgetApprovals(hold: SessionHold): Promise<void> {
  try {
    await hold.deps.approvals.clear(hold.sessionId, hold.token);
  } catch (err) {
    throw new SessionStoreError(hold.sessionId, err);
  }
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

type OpenRun = Extract<RunStart, { kind: "new" | "resume" }>;

/**
 * The handoff a batch's results make (`findHandoff`: its first `transfer_to_` result that
 * took, to one of the agent's handoffs), as the store appends it with them; `undefined` when
 * the batch hands nothing over.
 */
function handoffOf(
  hold: SessionHold,
  start: OpenRun,
  messages: AgentMessage[],
): Parameters<SessionStore["appendHandoff"]>[3] | undefined {
  const handoff = findHandoff(messages, hold.handoffs);
  const from = hold.agent?.name;
  if (!handoff || from === undefined) return undefined;
  return { runId: start.runId, event: { type: "agentHandoff", from, ...handoff } };
}

/**
 * The loop's view of the session's transcript: every write goes to Redis first, fenced. A
 * batch's results are appended without waiting for the reply; the next write goes right
 * behind them, guarded (`PipelinedTranscript`). A batch with calls awaiting approval is not
 * appended: the run parks (`parkRun`).
 */
function transcriptWriters(
  hold: SessionHold,
  start: OpenRun,
  inputIds: string[],
  executor: ApprovalExecutor,
  transcript: PipelinedTranscript,
  onDrained: (inputIds: string[]) => Promise<void>,
  onHandoff: (to: string) => Promise<void>,
  afterResumedBatch?: () => void,
) {
  let onAppended = afterResumedBatch;
  const { deps, sessionId, token, state } = hold;
  let opening: UserMessage[] = start.kind === "new" ? [start.message] : [];
  return {
    drainInput: async () => {
      await deps.syncWrittenTools?.();
      const drained = await transcript.write((expect) =>
        deps.store.drainInputs(sessionId, token, expect),
      );
      inputIds.push(...drained.inputIds);
      await onDrained(drained.inputIds);
      const moved = [...opening, ...drained.messages];
      opening = []; // the opening message is in the transcript already (startRun put it there)
      state.messages.push(...drained.messages);
      return moved;
    },
    appendMessages: async (messages: AgentMessage[]) => {
      await transcript.settle();
      if (executor.parked.size > 0) await parkRun(hold, executor);
      const handoff = handoffOf(hold, start, messages);
      hold.batchHandoff = undefined;
      if (handoff) {
        await transcript.write((expect) =>
          deps.store.appendHandoff(sessionId, token, messages, handoff, expect),
        );
      } else {
        transcript.appendBehind((expect) =>
          deps.store.appendMany(sessionId, token, messages, expect),
        );
      }
      state.messages.push(...messages);
      if (handoff) await onHandoff(handoff.event.to);
      executor.finished.clear();
      onAppended?.();
      onAppended = undefined;
      if (!executor.touched()) return;
      // The stored outcomes of a parked batch go only once its results are surely appended.
      await transcript.settle();
      await deps.approvals.clear(sessionId, token).catch(() => undefined); // stale entries are harmless
    },
    appendMessage: async (message: AgentMessage) => {
      await transcript.write((expect) => deps.store.append(sessionId, token, message, expect));
      state.messages.push(message);
    },
  };
}

/**
 * A resumed run's view of an abort recorded while no one could stop it (a parked run, a dead
 * holder, every coordinator down: `markRunAborted`, or a client's `requestAbort`), and a
 * child run's view of an abort of its tree that came before it opened (`treeAbortedAtOpen`).
 */
interface ResumedRunAbort {
  /**
   * Whether the run is aborted, read from Redis (remembered once true). A new root run is
   * never (any abort reaches it through its signal); a new child run is when its tree was
   * aborted before it opened.
   */
  check(): Promise<boolean>;
  /** Once the resumed batch is appended: aborts the run if an abort was seen. */
  afterResumedBatch(): void;
}

/**
 * Watches a resumed run for an abort recorded while no one held it. It is read when the run
 * resumes and again right before each call the run left unanswered is dispatched (an approved
 * call, say), so an abort recorded before that moment keeps the call from running. The run is
 * not stopped at once while its resumed batch lacks results: those calls get theirs first
 * (stored outcomes, denials, the ends of jobs already dispatched, the aborted result for the
 * rest), and the run is aborted once that batch is appended. A child run (new or resumed) is
 * also read once for an abort of its tree that came before it opened (`treeAbortedAtOpen`).
 */
function watchResumedRunAbort(
  hold: SessionHold,
  start: OpenRun,
  controller: AbortController,
): ResumedRunAbort {
  const { deps, sessionId } = hold;
  let aborted = false;
  let treeChecked = false;
  return {
    async check() {
      if (aborted) return true;
      if (!treeChecked) {
        treeChecked = true;
        aborted = await treeAbortedAtOpen(hold, start);
      }
      if (aborted || start.kind !== "resume") return aborted;
      aborted = await deps.store.takeAbortRequest(sessionId);
      if (aborted) deps.log.info({ sessionId, runId: start.runId }, "resumed run was aborted");
      return aborted;
    },
    afterResumedBatch() {
      if (aborted) controller.abort();
    },
  };
}

/**
 * The sessions above a child in its tree, root first (none for a root): where an abort of the
 * tree may be recorded that no coordinator has carried down yet.
 */
function ancestorSessions(place: TreePlace): string[] {
  if (place.depth === 0) return [];
  return [place.rootSessionId, ...place.path.slice(0, -1).map((link) => link.sessionId)];
}

/**
 * Whether a child run's tree was aborted before this run could see it. A new run that took an
 * `abortOnStart` mark as it opened (a parent that met the abort left it, `abortChildRun`) opened
 * aborted. Else each ancestor is read (`takeAbortRequest`): an abort recorded at the root while
 * no coordinator carried it down (every coordinator down, or none met the parked root yet)
 * aborts the run too, and is marked in it, so a successor that resumes it sees it. An abort
 * that comes after this read reaches the run as any abort of an open child does (its parent
 * marks it and announces it). A Redis failure stops the run before its first model call.
 */
async function treeAbortedAtOpen(hold: SessionHold, start: OpenRun): Promise<boolean> {
  if (start.kind === "new" && start.aborted) return true;
  const ancestors = ancestorSessions(hold.place);
  if (ancestors.length === 0) return false;
  const { store } = hold.deps;
  try {
    const marks = await Promise.all(ancestors.map((id) => store.takeAbortRequest(id)));
    if (!marks.includes(true)) return false;
    await store.markRunAborted(hold.sessionId);
  } catch (err) {
    throw new SessionStoreError(hold.sessionId, err);
  }
  hold.deps.log.info(
    { sessionId: hold.sessionId, runId: start.runId },
    "child run's tree was aborted",
  );
  return true;
}

/** Runs the agent loop in a `yiem.run` span: its LLM and tool-call spans (and the workers') are children. */
function runLoopInSpan(
  hold: SessionHold,
  start: OpenRun,
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

/**
 * Where the run's messages begin in the transcript: a new run's opening message (the last
 * one), or what a resumed run recorded when it opened (`undefined` for a run opened by a
 * version that did not: its usage then counts from where this holder took it over).
 */
function runStartOf(hold: SessionHold, start: OpenRun): number | undefined {
  return start.kind === "new" ? hold.state.messages.length - 1 : start.from;
}

/**
 * The model call and loop config of the run's current agent (`hold.agent`): its model call
 * (errors logged with the agent's name), and its turns, structured output and budget over the
 * coordinator's config, with the run's `executor`.
 */
function legOf(hold: SessionHold, start: OpenRun, executor: ApprovalExecutor): RunHandoff {
  const { deps, agent } = hold;
  const llmCall = logModelErrors(agent?.llmCall ?? deps.llmCall, deps.log, {
    sessionId: hold.sessionId,
    runId: start.runId,
    ...(agent ? { agent: agent.name } : {}),
  });
  return { llmCall, config: { ...deps.config, ...agentLimits(agent, deps.config), executor } };
}

/** The leg a handoff prepared (`handOver` in `runOne`), taken once by the loop. */
function takeNextLeg(hold: SessionHold): RunHandoff | undefined {
  const next = hold.nextLeg;
  hold.nextLeg = undefined;
  return next;
}

async function runOne(hold: SessionHold, start: OpenRun): Promise<RunAnswer> {
  const { deps, sessionId, token, state } = hold;
  hold.batchHandoff = undefined;
  hold.nextLeg = undefined;
  const runStart = runStartOf(hold, start) ?? state.messages.length;
  const inputIds = [...start.inputIds];
  const controller = new AbortController();
  hold.control.controller = controller;
  const resumedAbort = watchResumedRunAbort(hold, start, controller);
  if ((await resumedAbort.check()) && !findUnansweredToolCalls(state.messages)) controller.abort();
  const unanswered = unansweredCallIds(hold, start);
  // A call the run left unanswered is dispatched only if no abort was recorded meanwhile.
  const mayDispatch = async (prep: PreparedToolCall) =>
    !unanswered.has(prep.toolCall.id) || !(await resumedAbort.check());
  const keptBack: KeptBack = { startedBefore: await startedBefore(hold, start, unanswered) };
  const tree = treeOf(hold);
  const publisher = createEventPublisher(
    deps.command,
    deps.keys,
    { sessionId, runId: start.runId },
    deps.streamCaps,
    tree,
  );
  const remote = createRemoteExecutor({
    sessionId,
    runId: start.runId,
    queueFor: deps.queueFor,
    waiter: deps.waiter,
    beforeLocalCall: (prep) => guardLocalCall(hold, prep, mayDispatch),
    mayDispatch,
    workerOnly: deps.workerOnly,
    readFinished: async (prep, jobId) =>
      unanswered.has(prep.toolCall.id) ? readToolDone(deps.command, deps.keys, jobId) : undefined,
    onToolError: (prep, err) =>
      logToolError(
        deps.log,
        { tool: prep.tool.name, toolCallId: prep.toolCall.id, sessionId, runId: start.runId },
        err,
      ),
  });
  const executor = createApprovalExecutor(remote, {
    approvals: deps.approvals,
    sessionId,
    runId: start.runId,
    token,
    defaultTimeoutMs: deps.approvalTimeoutMs,
    stored: start.kind === "resume" ? await deps.approvals.storedOutcomes(sessionId) : new Map(),
    // Called once the loop runs, so `leg` is the current agent's (after any handoff).
    startChild: childStarter(hold, start, () =>
      remainingBudget(
        leg.config.budget,
        sumRunUsage(state.messages.slice(runStart), deps.config.prices),
      ),
    ),
  });
  const transcript = new PipelinedTranscript(sessionId, () => state.messages.length);
  const stored = finishedAnswer(hold, start);
  let leg = legOf(hold, start, executor);
  const lowerByRequests = (ids: string[]) => lowerByRequestBudgets(hold, leg.config, ids);
  await lowerByRequests(inputIds);
  // After a batch that handed the session over (stored with it): the run goes on as the target.
  const handOver = async (to: string) => {
    const from = hold.agent?.name;
    await takeAgent(hold);
    leg = legOf(hold, start, executor);
    await lowerByRequests(inputIds);
    hold.nextLeg = leg;
    deps.log.info({ sessionId, runId: start.runId, from, to }, "session handed over");
  };
  const response = stored
    ? await settleStoredAnswer(leg.config, stored)
    : await runLoopInSpan(hold, start, {
        state,
        llmCall: leg.llmCall,
        prepareContext,
        formatMsgForLLM,
        config: leg.config,
        emit: runEmitter(hold, publisher, executor, keptBack),
        signal: controller.signal,
        rethrow: isRecoverable,
        runStart,
        takeHandoff: () => takeNextLeg(hold),
        ...transcriptWriters(
          hold,
          start,
          inputIds,
          executor,
          transcript,
          lowerByRequests,
          handOver,
          () => resumedAbort.afterResumedBatch(),
        ),
      });
  hold.control.controller = undefined;
  if (start.kind === "resume" || executor.touched()) await forgetApprovals(hold);
  await publisher.flush();
  const agentEnd: AgentEndEvent =
    keptBack.agentEnd ??
    agentEndEvent(response, sumRunUsage(state.messages.slice(runStart), deps.config.prices));
  const agent = hold.agent ? { agent: hold.agent.name } : {};
  const run = { runId: start.runId, inputIds, event: agentEnd, ...agent };
  await transcript.write((expect) => deps.store.finishRun(sessionId, token, response, run, expect));
  if (tree) await showEndAtRoot(hold, tree, run);
  const answer: RunAnswer = { response, usage: agentEnd.usage, ...agent };
  deps.onRunFinished?.(sessionId, inputIds, answer);
  return answer;
}

/** Where a child run's events are seen too (its root, with the way down); none for a root. */
function treeOf(hold: SessionHold): EventTree | undefined {
  const { place } = hold;
  if (place.depth === 0 || place.path.length === 0) return undefined;
  return { rootSessionId: place.rootSessionId, path: place.path };
}

/**
 * Shows a child run's `agentEnd` (which `finishRun` publishes in the child's own stream) in its
 * root's stream too. Best effort: a failure loses only this copy.
 */
async function showEndAtRoot(
  hold: SessionHold,
  tree: EventTree,
  run: { runId: string; inputIds: string[]; event: AgentEndEvent },
): Promise<void> {
  const { deps, sessionId } = hold;
  const origin = { sessionId, runId: run.runId, inputIds: run.inputIds, path: tree.path };
  await publishEvent(
    deps.command,
    deps.keys,
    origin,
    run.event,
    deps.streamCaps,
    tree.rootSessionId,
  ).catch(() => undefined);
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
  register: (control: SessionControl | undefined) => void,
): Promise<SessionOutcome> {
  const lease = keepLease(deps.store, sessionId, token, deps.leaseMs);
  const hold: SessionHold = {
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
    control: { controller: undefined, handOver: async () => undefined },
    callees: new Map(),
    place: { rootSessionId: sessionId, depth: 0, path: [] },
  };
  hold.control.handOver = async () => {
    hold.handedOver = true;
    await deps.store.release(sessionId, token).catch(() => undefined); // first: no write of ours may land after this
    hold.control.controller?.abort(new LeaseLostError(sessionId));
  };
  // Losing the lease stops the run in progress without cancelling its remote calls: the
  // next holder attaches to them.
  lease.onLost(() => hold.control.controller?.abort(new LeaseLostError(sessionId)));
  register(hold.control);
  try {
    await takeAgent(hold);
    hold.state.messages = await deps.store.loadMessages(sessionId);
    hold.interrupted = new Set(await deps.store.loadRunning(sessionId));
    return await workSession(hold);
  } finally {
    lease.stop();
    register(undefined);
  }
}

/** How a run starts the child runs of its `agent__<name>` calls; `undefined` when its agent calls none. */
function childStarter(
  hold: SessionHold,
  start: OpenRun,
  budget: () => RunBudget | undefined,
):
  | ((prep: PreparedToolCall, key: string, agent: string) => Promise<ExecutedOutcome | "waiting">)
  | undefined {
  const childRuns = hold.deps.childRuns;
  if (!childRuns || hold.callees.size === 0) return undefined;
  const options: ChildCallOptions = {
    children: childRuns.store,
    sessionId: hold.sessionId,
    runId: start.runId,
    token: hold.token,
    place: hold.place,
    maxDepth: childRuns.maxDepth,
    callees: hold.callees,
    submit: childRuns.submit,
    remainingBudget: budget,
  };
  return (prep, key, agent) => startChildCall(options, prep, key, agent);
}

/** The loop settings an agent sets for its runs: turns, structured output, budget. */
function agentLimits(agent: ServedAgent | undefined, base: AgentLoopConfig): AgentRunSettings {
  return agent ? agentRunSettings(agent.definition, base) : {};
}

/**
 * Lowers the run's budget by the own budgets of the inputs `inputIds` (their requests'
 * `budget`, recorded with them): on opening or resuming a run (every input it has taken in, so
 * a successor applies the same limits) and for each input it takes in later. A Redis failure
 * stops the run before its next model call, to be resumed.
 */
async function lowerByRequestBudgets(
  hold: SessionHold,
  config: AgentLoopConfig,
  inputIds: string[],
): Promise<void> {
  const { deps, sessionId } = hold;
  let budgets: Awaited<ReturnType<typeof readInputBudgets>>;
  try {
    budgets = await readInputBudgets(deps.command, deps.keys, sessionId, inputIds);
  } catch (err) {
    throw new SessionStoreError(sessionId, err);
  }
  for (const budget of budgets) config.budget = lowerBudget(config.budget, budget);
}

/**
 * Gives the hold its session's current agent: the agent's prompt and its tools (a live view),
 * with a `transfer_to_<name>` tool per handoff (`HandoffToolView`).
 */
async function takeAgent(hold: SessionHold): Promise<void> {
  const found = await hold.deps.agentOf?.(hold.sessionId);
  if (!found) return;
  const { agent, handoffs = [] } = found;
  hold.agent = agent;
  hold.handoffs = handoffs.map((target) => target.name);
  hold.state.systemPrompt = found.systemPrompt;
  const tools = agent.toolsFrom(hold.deps.toolStore.tools);
  hold.state.tools =
    handoffs.length > 0
      ? new HandoffToolView(tools, agent.name, handoffs, transferOf(hold))
      : tools;
  await takeTreePlace(hold, found.callees ?? []);
}

/**
 * What a `transfer_to_<to>` call does: records `to` as its batch's handoff, which takes effect
 * once the batch's results are stored (`handoffOf`). Only a batch's first transfer takes: a
 * later one of the same batch gets an error result naming the first.
 */
function transferOf(hold: SessionHold): TransferFn {
  return (to) => {
    const first = hold.batchHandoff;
    if (first !== undefined)
      throw new Error(
        `not transferred to "${to}": this batch already transfers to "${first}" (only a batch's first transfer takes effect)`,
      );
    hold.batchHandoff = to;
    return {
      content: [{ type: "text", text: transferredText(to) }],
      details: { handoff: { from: hold.agent?.name, to } },
    };
  };
}

/**
 * Gives the hold its place in its tree (a child session's parent call, recorded at its first
 * intake) and its agent's callable agents as `agent__<name>` tools.
 */
async function takeTreePlace(hold: SessionHold, callees: readonly ServedAgent[]): Promise<void> {
  const childRuns = hold.deps.childRuns;
  if (!childRuns?.callsAgents) return;
  let parent: Awaited<ReturnType<ChildRunStore["readParent"]>>;
  try {
    parent = await childRuns.store.readParent(hold.sessionId);
  } catch (err) {
    throw new SessionStoreError(hold.sessionId, err);
  }
  if (parent)
    hold.place = {
      rootSessionId: parent.rootSessionId,
      depth: parent.depth,
      path: parent.path ?? [],
    };
  hold.callees = new Map(callees.map((callee) => [callee.name, callee])); // a handoff's target may have none
  if (callees.length === 0) return;
  hold.state.tools = withAgentCallTools(
    hold.state.tools,
    callees.map((callee) => callee.definition),
  );
}

/**
 * A parked run, no longer held: `parkedAborted` when an abort was recorded for it (a client's
 * request is taken into the run here), so that its calls awaiting approval get denied.
 */
async function parkedOutcome(hold: SessionHold): Promise<SessionOutcome> {
  const aborted = await hold.deps.store.takeAbortRequest(hold.sessionId);
  return aborted ? "parkedAborted" : "parked";
}

async function workSession(hold: SessionHold): Promise<SessionOutcome> {
  for (;;) {
    if (hold.handedOver) return "handedOver";
    if (hold.lease.lost) return "lost";
    const start = await hold.deps.store.startRun(hold.sessionId, hold.token);
    if (start.kind === "lost") return hold.handedOver ? "handedOver" : "lost";
    if (start.kind === "parked") return parkedOutcome(hold);
    if (start.kind === "settling") {
      await sleep(start.retryInMs);
      continue;
    }
    if (start.kind === "idle") {
      const released = await hold.deps.store.releaseIfIdle(hold.sessionId, hold.token);
      if (released === "released") return "idle";
      if (released === "lost") return hold.handedOver ? "handedOver" : "lost";
      continue;
    }
    if (start.kind === "new") hold.state.messages.push(start.message);
    const before = hold.state.messages.length;
    const startedAt = Date.now();
    let answer: RunAnswer;
    try {
      answer = await runOne(hold, start);
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
    hold.deps.log.info(
      {
        sessionId: hold.sessionId,
        runId: start.runId,
        ...(hold.agent ? { agent: hold.agent.name } : {}),
        ...summarizeRun(hold.state.messages.slice(before)),
        durationMs: Date.now() - startedAt,
        stopReason: answer.response.stopReason,
        usage: answer.usage,
        ...(start.kind === "resume" ? { resumed: true } : {}),
      },
      "run finished",
    );
  }
}
