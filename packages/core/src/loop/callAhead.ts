import type { AgentTool, AssistantMessage, UserMessage } from "../types/index.js";
import type { AgentState } from "./agentState.js";

/** Starts a model call on `signal`, telling `onTextDelta` each piece of streamed text. */
export type StartModelCall = (
  signal: AbortSignal,
  onTextDelta: (delta: string) => void,
) => Promise<AssistantMessage>;

/**
 * A model call sent before the turn's drain has answered (`AgentLoopDeps.callAheadOfDrain`),
 * built from the transcript as it stood: its streamed text is held back until the loop keeps
 * it. Kept when the drain moved nothing in and the run's prompt, tools and transcript are
 * those it was built from; else dropped: aborted, nothing of it announced.
 */
export interface CallAhead {
  /** Whether the call still fits the run: nothing was drained, and the context is as it was. */
  fits(state: AgentState, drained: readonly UserMessage[]): boolean;
  /** Tells the held text, then every further piece as it comes; resolves the model's answer. */
  keep(): Promise<AssistantMessage>;
  /** Aborts the call; none of its text is told. Never throws. */
  drop(): void;
}

/** What the call was built from: the loop keeps it only while these are unchanged. */
interface BuiltFrom {
  length: number;
  tools: Map<string, AgentTool>;
  toolCount: number;
  systemPrompt: string;
}

/**
 * Sends a model call ahead of the drain (`start`), aborted when the run is (`runSignal`) or
 * when dropped; its text goes to `tell` once kept, in order. Never throws.
 *
 * @example
 * const ahead = sendCallAhead(state, run.signal, tell, (signal, onTextDelta) => llmCall(request, signal, { onTextDelta }));
 * const drained = await draining;
 * const answer = ahead.fits(state, drained) ? await ahead.keep() : (ahead.drop(), await callAgain());
 */
export function sendCallAhead(
  state: AgentState,
  runSignal: AbortSignal,
  tell: (delta: string) => void,
  start: StartModelCall,
): CallAhead {
  const builtFrom: BuiltFrom = {
    length: state.messages.length,
    tools: state.tools,
    toolCount: state.tools.size,
    systemPrompt: state.systemPrompt,
  };
  const controller = new AbortController();
  const abort = () => controller.abort();
  runSignal.addEventListener("abort", abort, { once: true });
  // Held until kept; told as they come once kept; dropped with the call.
  let held: string[] | "tell" | "drop" = [];
  const answer = start(controller.signal, (delta) => {
    if (held === "tell") tell(delta);
    else if (held !== "drop") held.push(delta);
  });
  const forget = () => runSignal.removeEventListener("abort", abort);
  return {
    fits: (now, drained) =>
      drained.length === 0 &&
      now.messages.length === builtFrom.length &&
      now.tools === builtFrom.tools &&
      now.tools.size === builtFrom.toolCount &&
      now.systemPrompt === builtFrom.systemPrompt,
    async keep() {
      const told = Array.isArray(held) ? held : [];
      held = "tell";
      for (const delta of told) tell(delta);
      try {
        return await answer;
      } finally {
        forget();
      }
    },
    drop() {
      held = "drop";
      forget();
      controller.abort();
      answer.catch(() => undefined);
    },
  };
}
