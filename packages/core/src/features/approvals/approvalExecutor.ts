import { createErrorToolResult } from "../../tools/toolResults.js";
import type {
  EmitFn,
  ExecutedOutcome,
  ExecutionContext,
  PreparedToolCall,
  ToolExecutor,
} from "../../types/index.js";
import type { CallWait, WaitDecision, WaitingCall } from "../runFeature.js";

/** What the waiting-calls executor of one run needs. */
export interface WaitingExecutorOptions {
  /** Reads the decision recorded on a waiting call (a person's, or a child run's answer). */
  decision: (key: string) => Promise<WaitDecision | undefined>;
  /** Outcomes a parked batch stored, by call key (read once when a run resumes). */
  stored: ReadonlyMap<string, ExecutedOutcome>;
  /** The waits of the run (the approval gate, child runs' calls): the first that claims a call handles it. */
  waits: readonly CallWait[];
}

/** A `ToolExecutor` that holds calls waiting outside the run back, and tells the run what it did. */
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

/** The call as a `CallWait` sees it. */
function waitingCallOf(prep: PreparedToolCall, key: string, emit: EmitFn): WaitingCall {
  return {
    key,
    toolCallId: prep.toolCall.id,
    toolName: prep.tool.name,
    tool: prep.tool,
    args: prep.args,
    ...(prep.approval ? { approval: prep.approval } : {}),
    ...(prep.tool.approvalTimeoutMs !== undefined
      ? { approvalTimeoutMs: prep.tool.approvalTimeoutMs }
      : {}),
    emit: async (event) => emit(event),
  };
}

/**
 * Wraps a run's executor with the calls that wait outside the run. A call whose outcome a
 * parked batch stored is answered from `stored` (never run twice). A call a wait claims
 * (`CallWait.claims`) is settled by it against its recorded decision: it runs, gets an
 * outcome without running, or is left waiting as a placeholder the run must not append (see
 * `parked`). Other calls run as they are. Never throws; a Redis error while settling a
 * claimed call leaves it waiting (it never runs without a recorded decision).
 */
export function createApprovalExecutor(
  inner: ToolExecutor,
  options: WaitingExecutorOptions,
): ApprovalExecutor {
  const parked = new Set<string>();
  const reused = new Set<string>();
  const finished = new Map<string, ExecutedOutcome>();
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
      const call = waitingCallOf(prep, key, emit);
      const wait = options.waits.find((w) => w.claims(call));
      if (!wait) return run(key, prep, signal, emit, context);
      let settled: Awaited<ReturnType<CallWait["settle"]>>;
      try {
        settled = await wait.settle(call, await options.decision(key));
      } catch {
        // Redis failed: never run the call, never give it an error result; the batch parks
        // (or, with nothing recorded, resumes and asks again).
        settled = { kind: "waiting" };
      }
      if (settled.kind === "waiting") {
        parked.add(prep.toolCall.id);
        return awaitingOutcome();
      }
      if (settled.decided) decided++;
      if (settled.kind === "answered") {
        if (!settled.decided) finished.set(key, settled.outcome);
        return settled.outcome;
      }
      const outcome = await run(key, { ...prep, approval: undefined }, signal, emit, context);
      return settled.decorate ? settled.decorate(outcome) : outcome;
    },
  };
}
