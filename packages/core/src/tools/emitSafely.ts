import type { AgentEvent, EmitFn } from "../types/index.js";

/**
 * Emits an event and waits for the sink; a sink that throws or rejects is ignored so that
 * a broken observer can never break a tool call. Never throws.
 */
export async function emitSafely(emit: EmitFn, event: AgentEvent): Promise<void> {
  try {
    await emit(event);
  } catch {
    // An event sink is an observer: its failures must not change the run.
  }
}
