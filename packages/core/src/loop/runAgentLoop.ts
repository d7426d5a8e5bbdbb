import { emitSafely } from "../tools/emitSafely.js";
import { executeToolCalls } from "../tools/executeToolCalls.js";
import {
  extractToolCalls,
  type ReadToolCall,
  readToolCalls,
  toAgentToolCalls,
} from "../tools/extractToolCalls.js";
import { describeError } from "../tools/toolResults.js";
import { inSpan, markSpanError } from "../tracing/spans.js";
import type {
  AgentContext,
  AgentEndEvent,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentToolCall,
  AssistantMessage,
  EmitFn,
  LlmCall,
  LlmRequest,
  RunUsage,
  ToolResultMessage,
  UserMessage,
} from "../types/index.js";
import type { AgentState } from "./agentState.js";
import { type CallAhead, sendCallAhead } from "./callAhead.js";
import { assignCallKeys } from "./callKeys.js";
import { buildStopResponse, buildTerminatedResponse } from "./finalResponses.js";
import {
  buildOutputCorrection,
  buildOutputFailure,
  checkFinalAnswer,
  UNCHECKED_STOP_REASONS,
} from "./outputCheck.js";
import { formatWithOutput, type OutputSpec, resolveOutputSpec } from "./outputSpec.js";
import { buildBudgetResponse, reachedBudget } from "./runBudget.js";
import { sumRunUsage } from "./runUsage.js";
import { trimContext } from "./trimContext.js";
import { findUnansweredToolCalls } from "./unansweredToolCalls.js";

/** The default limit on LLM calls in one run. */
export const DEFAULT_MAX_TURNS = 50;

/**
 * Everything one run needs. The loop keeps no state of its own: the transcript lives in
 * `state.messages`, and `appendMessage` is where a caller persists a message before the loop
 * acts on it (the cluster writes it to Redis there).
 */
export interface AgentLoopDeps {
  state: AgentState;
  llmCall: LlmCall;
  prepareContext: (state: AgentState) => AgentContext;
  formatMsgForLLM: (context: AgentContext) => LlmRequest;
  /** How the run behaves (hooks, batch mode, executor, caps): handed as is to every batch. */
  config: AgentLoopConfig;
  emit: EmitFn;
  signal: AbortSignal;
  /**
   * Moves the input that arrived since the last call into the transcript (`state.messages`
   * and wherever the caller persists it) and returns it; called before every LLM call
   * (lifecycle §6 step 1). The loop only announces the returned messages.
   */
  drainInput: () => UserMessage[] | Promise<UserMessage[]>;
  /** Adds a message to the transcript. Default: pushes to `state.messages`. */
  appendMessage?: (message: AgentMessage) => void | Promise<void>;
  /** Adds a batch's tool results at once (one write instead of one per message). Default: one `appendMessage` each. */
  appendMessages?: (messages: AgentMessage[]) => void | Promise<void>;
  /**
   * Errors the loop must not turn into a final response, because the caller recovers from
   * them (the cluster: a lost lease, or Redis failing to store the transcript). Default: none.
   */
  rethrow?: (err: unknown) => boolean;
  /**
   * Where this run's messages begin in `state.messages`: what its usage (`agentEnd`) adds up.
   * Default: the transcript's length when the loop starts (a resumed run passes its start).
   */
  runStart?: number;
  /**
   * Asked after each batch's results are appended: when a call of the batch handed the run to
   * another agent (a handoff), the model call and config the run goes on with (the caller has
   * put the new agent's prompt and tools in `state` already); `undefined` to go on as before.
   * The turn count goes on (the new config's `maxTurns` caps the whole run); corrections of
   * an invalid structured answer start again. Default: never.
   */
  takeHandoff?: () => RunHandoff | undefined;
  /**
   * Asked before each model call, after the run's own budget: reserves the call from a budget
   * shared with other runs (a tree of agents' one ledger). Returns why the call may not be made
   * (the run then ends with `stopReason: "budget"` and that reason), or `undefined` once it is
   * reserved. Default: every call may be made.
   */
  reserveModelCall?: () => Promise<string | undefined>;
  /**
   * Asked at each turn's start, once `drainInput` was called and returned a promise: whether
   * the model call may be sent before the drain answers (the cluster: a drain is a round trip
   * to Redis). The call is then built from the transcript as it stands, after the run's
   * budget and `reserveModelCall`, and its text held back; it is kept when the drain moved
   * nothing in and the prompt, tools and transcript are unchanged, else aborted (none of its
   * text announced) and the turn calls the model again (`callAhead.ts`). Never for a run with
   * a `budget`: a call sent is a call made. Default: never.
   */
  callAheadOfDrain?: () => boolean;
}

/** How a run goes on after a handoff (`AgentLoopDeps.takeHandoff`): the new agent's model call and config. */
export interface RunHandoff {
  llmCall: LlmCall;
  config: AgentLoopConfig;
}

/** The deps of one run, with its structured-output settings resolved. */
type RunDeps = AgentLoopDeps & { output: OutputSpec | undefined };

/** `answer`: the model answered without tool calls (a final answer, to check for output). */
type TurnOutcome =
  | { kind: "continue" }
  | { kind: "done"; response: AssistantMessage }
  | { kind: "answer"; response: AssistantMessage };

async function append(deps: AgentLoopDeps, message: AgentMessage): Promise<void> {
  if (deps.appendMessage) await deps.appendMessage(message);
  else deps.state.messages.push(message);
  await emitSafely(deps.emit, { type: "messageEnd", message });
}

/** Calls the model in a `yiem.llm_call` span; a throwing `llmCall` becomes an error response. */
function callModel(
  deps: AgentLoopDeps,
  request: LlmRequest,
  signal?: AbortSignal,
  onTextDelta?: (delta: string) => void,
): Promise<AssistantMessage> {
  return inSpan("yiem.llm_call", {}, async (span) => {
    const response = await callModelUntraced(deps, request, signal, onTextDelta);
    span.setAttributes({
      "yiem.stop_reason": response.stopReason,
      ...(response.model ? { "gen_ai.response.model": response.model } : {}),
    });
    if (response.stopReason === "error")
      markSpanError(span, response.errorMessage ?? "model error");
    return response;
  });
}

/** Streamed answer text goes out as it comes; the `messageEnd` after it carries all of it. */
function tellTextDelta(deps: AgentLoopDeps): (delta: string) => void {
  return (delta) => void emitSafely(deps.emit, { type: "messageUpdate", delta });
}

async function callModelUntraced(
  deps: AgentLoopDeps,
  request: LlmRequest,
  signal: AbortSignal = deps.signal,
  onTextDelta: (delta: string) => void = tellTextDelta(deps),
): Promise<AssistantMessage> {
  try {
    const tenant = deps.config.tenant;
    return await deps.llmCall(request, signal, {
      onTextDelta,
      ...(tenant !== undefined ? { tenant } : {}),
    });
  } catch (err) {
    if (signal.aborted) return buildStopResponse("aborted", "Run aborted");
    return buildStopResponse("error", `llmCall failed: ${describeError(err)}`);
  }
}

/**
 * The tool calls of the model's answer, each read once (lifecycle §7): the blocks the
 * transcript keeps and the calls the batch runs both come from this. None when the answer
 * failed or was aborted: its calls would never get results.
 */
function readAnswerCalls(deps: AgentLoopDeps, answer: AssistantMessage): ReadToolCall[] {
  if (answer.stopReason === "error" || answer.stopReason === "aborted") return [];
  const content = Array.isArray(answer.content) ? answer.content : [];
  return readToolCalls(content, deps.config.limits);
}

/** The answer as the transcript keeps it: text and thinking, then its calls' canonical blocks. */
function toTranscriptAnswer(answer: AssistantMessage, calls: ReadToolCall[]): AssistantMessage {
  const content = Array.isArray(answer.content) ? answer.content : [];
  const rest = content.filter((block) => block.type === "text" || block.type === "thinking");
  return { ...answer, content: [...rest, ...calls.map((call) => call.block)] };
}

/** Executes tool calls of `assistantMessage` (all, or the unanswered ones on resume). */
async function runBatch(
  deps: AgentLoopDeps,
  assistantMessage: AssistantMessage,
  calls: AgentToolCall[],
): Promise<{ messages: ToolResultMessage[]; terminate: boolean }> {
  const { state } = deps;
  const context: AgentContext = {
    systemPrompt: state.systemPrompt,
    messages: state.messages,
    tools: state.tools,
  };
  assignCallKeys(state.messages, assistantMessage, calls);
  const batch = await executeToolCalls(
    context,
    assistantMessage,
    calls,
    deps.config,
    deps.signal,
    deps.emit,
  );
  if (!deps.appendMessages) {
    for (const message of batch.messages) await append(deps, message);
    return batch;
  }
  await deps.appendMessages(batch.messages);
  for (const message of batch.messages)
    await emitSafely(deps.emit, { type: "messageEnd", message });
  return batch;
}

/** The budget limit the run has reached so far (`reachedBudget`), if any. */
function budgetReached(deps: AgentLoopDeps): string | undefined {
  const { budget, prices } = deps.config;
  if (!budget) return undefined;
  const usage = sumRunUsage(deps.state.messages.slice(deps.runStart ?? 0), prices);
  return reachedBudget(usage, budget);
}

/** The request of the turn's model call, or why there is none (a context that cannot fit). */
function buildRequest(deps: RunDeps): { request: LlmRequest } | { error: string } {
  const trimmed = trimContext(deps.prepareContext(deps.state), deps.config.limits?.maxContextBytes);
  if (trimmed.kind === "tooLarge") return { error: trimmed.error };
  return { request: formatWithOutput(deps.output, trimmed.context, deps.formatMsgForLLM) };
}

/**
 * A call sent ahead of the turn's drain (`AgentLoopDeps.callAheadOfDrain`); or its call
 * reserved but not sent (a context that cannot fit); or why the turn makes none.
 */
type Ahead =
  | { kind: "sent"; call: CallAhead }
  | { kind: "reserved" }
  | { kind: "refused"; reason: string }
  | undefined;

/**
 * Sends the turn's model call while its drain (`draining`) is on its way, when the run allows
 * it: after the budget and the reservation, as a call made after the drain would be.
 */
async function sendAheadOfDrain(deps: RunDeps, draining: unknown): Promise<Ahead> {
  if (!(draining instanceof Promise) || deps.config.budget || !deps.callAheadOfDrain?.())
    return undefined;
  // Reserved first: its await lets the drain go out before the request is built.
  const reached = await deps.reserveModelCall?.();
  if (reached) return { kind: "refused", reason: reached };
  const built = buildRequest(deps);
  if ("error" in built) return { kind: "reserved" };
  const call = sendCallAhead(deps.state, deps.signal, tellTextDelta(deps), (signal, onTextDelta) =>
    callModel(deps, built.request, signal, onTextDelta),
  );
  return { kind: "sent", call };
}

/** The drain's messages; a drain that failed drops the call sent ahead of it, and throws. */
async function awaitDrain(
  draining: UserMessage[] | Promise<UserMessage[]>,
  ahead: Ahead,
): Promise<UserMessage[]> {
  try {
    return await draining;
  } catch (err) {
    if (ahead?.kind === "sent") ahead.call.drop();
    throw err;
  }
}

/**
 * The turn's model answer: the call sent ahead when it still fits, else a call made now
 * (after the budget and a reservation: the one made ahead, if any); `{ budget }` when the
 * budget refuses it.
 */
async function answerTurn(
  deps: RunDeps,
  turn: number,
  ahead: Ahead,
  drained: UserMessage[],
): Promise<AssistantMessage | { budget: string }> {
  if (ahead?.kind === "refused") return { budget: ahead.reason };
  if (ahead?.kind === "sent" && ahead.call.fits(deps.state, drained)) {
    await emitSafely(deps.emit, { type: "turnStart", turn });
    return ahead.call.keep();
  }
  if (ahead?.kind === "sent") ahead.call.drop();
  // The reservation made ahead stands for this call, unless the input drained since brought
  // the run a budget (its ledger has reserved nothing yet).
  const reserve = !ahead || deps.config.budget ? deps.reserveModelCall : undefined;
  const reached = budgetReached(deps) ?? (await reserve?.());
  if (reached) return { budget: reached };
  await emitSafely(deps.emit, { type: "turnStart", turn });
  const built = buildRequest(deps);
  return "error" in built
    ? buildStopResponse("error", built.error)
    : await callModel(deps, built.request);
}

/** One turn: drain input, call the model, run the tool calls it asked for (lifecycle §6). */
async function runTurn(deps: RunDeps, turn: number): Promise<TurnOutcome> {
  const draining = deps.drainInput();
  const ahead = await sendAheadOfDrain(deps, draining);
  const drained = await awaitDrain(draining, ahead);
  for (const message of drained) await emitSafely(deps.emit, { type: "messageEnd", message });
  const answer = await answerTurn(deps, turn, ahead, drained);
  if ("budget" in answer) return { kind: "done", response: buildBudgetResponse(answer.budget) };
  const calls = readAnswerCalls(deps, answer);
  const response = toTranscriptAnswer(answer, calls);
  await append(deps, response);
  if (calls.length === 0) {
    await emitSafely(deps.emit, { type: "turnEnd", turn, message: response, toolResults: [] });
    return { kind: "answer", response };
  }
  const batch = await runBatch(deps, response, toAgentToolCalls(calls, deps.config.limits));
  await emitSafely(deps.emit, {
    type: "turnEnd",
    turn,
    message: response,
    toolResults: batch.messages,
  });
  if (deps.signal.aborted)
    return { kind: "done", response: buildStopResponse("aborted", "Run aborted") };
  if (batch.terminate) return { kind: "done", response: buildTerminatedResponse(batch, response) };
  return { kind: "continue" };
}

/** Finishes tool calls a previous run left without results (a resumed session). */
async function resumeUnanswered(deps: AgentLoopDeps): Promise<TurnOutcome> {
  const pending = findUnansweredToolCalls(deps.state.messages);
  if (!pending) return { kind: "continue" };
  const calls = extractToolCalls(pending.calls, deps.config.limits);
  const batch = await runBatch(deps, pending.assistantMessage, calls);
  if (deps.signal.aborted)
    return { kind: "done", response: buildStopResponse("aborted", "Run aborted") };
  if (batch.terminate)
    return { kind: "done", response: buildTerminatedResponse(batch, pending.assistantMessage) };
  return { kind: "continue" };
}

/**
 * A final answer under an output schema: valid, the response with its `output`; invalid with
 * corrections left, the errors go back to the model (`continue`); else the run fails.
 */
async function settleAnswer(
  deps: RunDeps,
  answer: AssistantMessage,
  corrections: number,
): Promise<TurnOutcome> {
  const spec = deps.output;
  if (!spec || UNCHECKED_STOP_REASONS.has(answer.stopReason))
    return { kind: "done", response: answer };
  const check = await checkFinalAnswer(spec, answer);
  if (check.ok) return { kind: "done", response: { ...answer, output: check.value } };
  if (corrections >= spec.retries)
    return { kind: "done", response: buildOutputFailure(answer, check.errors, spec.retries) };
  await append(deps, buildOutputCorrection(check.errors));
  return { kind: "continue" };
}

/** After a batch: switches the run's model call and config when the batch handed it over; true then. */
function switchOnHandoff(deps: RunDeps): boolean {
  const handoff = deps.takeHandoff?.();
  if (!handoff) return false;
  deps.llmCall = handoff.llmCall;
  deps.config = handoff.config;
  deps.output = resolveOutputSpec(handoff.config);
  return true;
}

async function loop(deps: RunDeps): Promise<AssistantMessage> {
  const resumed = await resumeUnanswered(deps);
  if (resumed.kind === "done") return resumed.response;
  switchOnHandoff(deps);
  let corrections = 0;
  for (let turn = 1; ; turn++) {
    if (deps.signal.aborted) return buildStopResponse("aborted", "Run aborted");
    const maxTurns = deps.config.maxTurns ?? DEFAULT_MAX_TURNS;
    if (turn > maxTurns) {
      return buildStopResponse(
        "error",
        `The run stopped after ${maxTurns} turns (maxTurns) without a final answer`,
      );
    }
    const turnOutcome = await runTurn(deps, turn);
    if (switchOnHandoff(deps)) corrections = 0;
    const outcome =
      turnOutcome.kind === "answer"
        ? await settleAnswer(deps, turnOutcome.response, corrections++)
        : turnOutcome;
    if (outcome.kind === "done") return outcome.response;
  }
}

/**
 * Runs one agent run to its final response (lifecycle §5–§6): drain input, prepare context,
 * format, call the model, execute its tool calls, repeat until the model answers without
 * tool calls, a batch terminates, the run is aborted, or `maxTurns` is reached. With an
 * `outputSchema`, the answer without tool calls is checked and, when invalid, corrected up
 * to `outputRetries` times (each correction a turn); a valid one is the response's `output`.
 * Emits `agentStart` … `agentEnd`. Never throws, except the errors `deps.rethrow` selects: a
 * failing hook or model becomes a final response with `stopReason: "error"`.
 */
export async function runAgentLoop(deps: AgentLoopDeps): Promise<AssistantMessage> {
  const emit = trackPendingCalls(deps);
  const runStart = deps.runStart ?? deps.state.messages.length;
  deps.state.activeRun = true;
  await emitSafely(emit, { type: "agentStart" });
  let response: AssistantMessage;
  try {
    response = await loop({ ...deps, emit, runStart, output: resolveOutputSpec(deps.config) });
  } catch (err) {
    deps.state.activeRun = false;
    if (deps.rethrow?.(err)) throw err;
    response = buildStopResponse("error", `run failed: ${describeError(err)}`);
  }
  deps.state.activeRun = false;
  deps.state.errorMessage = response.errorMessage;
  const usage = sumRunUsage(deps.state.messages.slice(runStart), deps.config.prices);
  await emitSafely(emit, agentEndEvent(response, usage));
  return response;
}

/** The run's `agentEnd`: its response, and its structured output when it has one. */
export function agentEndEvent(response: AssistantMessage, usage: RunUsage): AgentEndEvent {
  return "output" in response
    ? { type: "agentEnd", response, usage, output: response.output }
    : { type: "agentEnd", response, usage };
}

/** Wraps `emit` so `state.pendingToolCalls` follows tool starts and ends. */
function trackPendingCalls(deps: AgentLoopDeps): EmitFn {
  const pending = deps.state.pendingToolCalls;
  return (event: AgentEvent) => {
    if (event.type === "toolExecStart") pending.add(event.toolCallId);
    if (event.type === "toolExecEnd") pending.delete(event.toolCallId);
    return deps.emit(event);
  };
}
