import { calledAgentOf } from "../childRuns/agentCallTools.js";
import type { ApprovalDecision, ApprovalStore } from "./approvalStore.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type {
  EmitFn,
  ExecutedOutcome,
  ExecutionContext,
  PreparedToolCall,
  ToolExecutor,
} from "../../types/index.js";

/** What the approval gate of one run needs. */
export interface ApprovalGateOptions {
  approvals: ApprovalStore;
  sessionId: string;
  runId: string;
  token: string;
  /** Deny a waiting call on its own after this long, unless its tool says otherwise. */
  defaultTimeoutMs?: number;
  /** Outcomes a parked batch stored, by call key (read once when a run resumes). */
  stored: ReadonlyMap<string, ExecutedOutcome>;
  /**
   * Starts the child run of an `agent__<name>` call (`childCalls.ts`): "waiting" once it is
   * recorded and submitted, or the call's outcome when it cannot start (the depth cap).
   * Without it, such a call runs as any tool.
   */
  startChild?: (
    prep: PreparedToolCall,
    key: string,
    agent: string,
  ) => Promise<ExecutedOutcome | "waiting">;
}

/** A `ToolExecutor` that holds calls needing approval back, and tells the run what it did. */
export interface ApprovalExecutor extends ToolExecutor {
  /** Ids of calls this run left waiting for a decision (their results are placeholders). */
  readonly parked: Set<string>;
  /** Ids of calls whose outcome came from a parked batch's store (not run again). */
  readonly reused: Set<string>;
  /** Outcomes of calls that finished in this run, by call key (stored when the run parks). */
  readonly finished: Map<string, ExecutedOutcome>;
  /** True once a call of this run was decided on or reused a stored outcome. */
  touched(): boolean;
}

/** The text a placeholder carries; it never reaches the transcript. */
const AWAITING_TEXT = "awaiting approval";

/** The placeholder outcome of a call left waiting (never appended). */
function awaitingOutcome(): ExecutedOutcome {
  return { result: createErrorToolResult(AWAITING_TEXT), isError: true };
}

/** The text the model reads for a denied call. */
export function denialText(decision: ApprovalDecision): string {
  const by = decision.by ? ` by ${decision.by}` : "";
  return `The call was not run: denied${by}: ${decision.reason ?? "no reason given"}`;
}

/** The decision as kept in the tool result's `details.approval`. */
function approvalDetails(prep: PreparedToolCall, decision: ApprovalDecision) {
  return {
    decision: decision.approved ? "approved" : "denied",
    ...(decision.by ? { by: decision.by } : {}),
    ...(decision.reason ? { reason: decision.reason } : {}),
    decidedAt: new Date(decision.decidedAt).toISOString(),
    requested: prep.approval?.reason,
  };
}

function withDetails(outcome: ExecutedOutcome, details: Record<string, unknown>): ExecutedOutcome {
  const result = { ...outcome.result, details: { ...outcome.result.details, approval: details } };
  return { ...outcome, result };
}

/**
 * Wraps a run's executor with human approval. A call whose outcome a parked batch stored is
 * answered from `stored` (never run twice); only calls needing approval read Redis here. A call needing approval (`prep.approval`) runs
 * once approved, becomes an error result with the reason once denied, and otherwise is
 * recorded as awaiting approval (publishing `toolApprovalRequested` the first time) and left
 * as a placeholder the run must not append: see `parked`. Never throws; a Redis error while
 * deciding also leaves the call waiting (it never runs without a recorded approval).
 */
export function createApprovalExecutor(
  inner: ToolExecutor,
  options: ApprovalGateOptions,
): ApprovalExecutor {
  const parked = new Set<string>();
  const reused = new Set<string>();
  const finished = new Map<string, ExecutedOutcome>();
  const { approvals, sessionId } = options;
  let decided = 0;
  const run = async (
    key: string,
    prep: PreparedToolCall,
    signal: AbortSignal | undefined,
    emit: EmitFn,
    context: ExecutionContext | undefined,
  ) => {
    const outcome = await inner.execute(prep, signal, emit, context);
    finished.set(key, outcome);
    return outcome;
  };
  return {
    parked,
    reused,
    finished,
    touched: () => decided > 0 || reused.size > 0,
    async execute(prep, signal, emit, context) {
      const key = prep.toolCall.key ?? prep.toolCall.id;
      const stored = options.stored.get(key);
      if (stored) {
        reused.add(prep.toolCall.id);
        return stored;
      }
      const callee = options.startChild ? calledAgentOf(prep.tool) : undefined;
      if (callee !== undefined) {
        const answered = await answerChildCall(options, key, prep, callee);
        if (answered === "waiting") {
          parked.add(prep.toolCall.id);
          return awaitingOutcome();
        }
        if (answered.decided) decided++;
        else finished.set(key, answered.outcome);
        return answered.outcome;
      }
      if (!prep.approval) return run(key, prep, signal, emit, context);
      let decision: ApprovalDecision | undefined;
      try {
        decision = await approvals.decision(sessionId, key);
        if (!decision) await requestApproval(options, key, prep, emit);
      } catch {
        // Redis failed: never run the call, never give it an error result; the batch parks
        // (or, with nothing recorded, resumes and asks again).
        parked.add(prep.toolCall.id);
        return awaitingOutcome();
      }
      if (decision) decided++;
      if (decision?.approved) {
        const outcome = await run(key, { ...prep, approval: undefined }, signal, emit, context);
        return withDetails(outcome, approvalDetails(prep, decision));
      }
      if (decision) {
        const denied = { result: createErrorToolResult(denialText(decision)), isError: true };
        return withDetails(denied, approvalDetails(prep, decision));
      }
      parked.add(prep.toolCall.id);
      return awaitingOutcome();
    },
  };
}

/**
 * An `agent__<name>` call: its child's answer once recorded (`decided`), else its child run is
 * started (once: a resumed batch finds it recorded) and the call waits. A Redis error leaves it
 * waiting too: the batch parks, or resumes and starts (finds) the child again.
 */
async function answerChildCall(
  options: ApprovalGateOptions,
  key: string,
  prep: PreparedToolCall,
  callee: string,
): Promise<{ outcome: ExecutedOutcome; decided: boolean } | "waiting"> {
  try {
    const decision = await options.approvals.decision(options.sessionId, key);
    if (decision) {
      const why = `agent "${callee}" did not answer: ${decision.reason ?? "its call was denied"}`;
      const outcome = decision.outcome ?? { result: createErrorToolResult(why), isError: true };
      return { outcome, decided: true };
    }
    const started = await options.startChild?.(prep, key, callee);
    return started === undefined || started === "waiting"
      ? "waiting"
      : { outcome: started, decided: false };
  } catch {
    return "waiting";
  }
}

/** Records the call as awaiting approval and announces it the first time. */
async function requestApproval(
  options: ApprovalGateOptions,
  key: string,
  prep: PreparedToolCall,
  emit: EmitFn,
): Promise<void> {
  const now = Date.now();
  const timeoutMs = prep.tool.approvalTimeoutMs ?? options.defaultTimeoutMs;
  const deadline = timeoutMs && timeoutMs > 0 ? now + timeoutMs : undefined;
  const reason = prep.approval?.reason ?? "approval required";
  const recorded = await options.approvals.request(options.sessionId, options.token, {
    callKey: key,
    toolCallId: prep.toolCall.id,
    toolName: prep.tool.name,
    arguments: prep.args,
    reason,
    runId: options.runId,
    requestedAt: now,
    ...(deadline ? { deadline } : {}),
  });
  if (recorded !== "new") return;
  await emit({
    type: "toolApprovalRequested",
    toolCallId: prep.toolCall.id,
    callKey: key,
    toolName: prep.tool.name,
    arguments: prep.args,
    reason,
    ...(deadline ? { deadline } : {}),
  });
}
