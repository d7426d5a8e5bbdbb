import type { LlmCall } from "../../types/index.js";
import type { Slot } from "../intake/runSlots.js";

/**
 * Wraps a run's model call so that while a request waits at a gate outside the process (its
 * turn under a shared provider limit, `LlmCallOptions.onGateWait`) the run's slot is lent to
 * other runs, and taken back when the wait ends. Without it, a tenant's flood of runs waiting
 * at a limit holds every slot, and another tenant's run cannot even start. Any `onGateWait`
 * the caller passed is told too. Never changes the request nor the answer.
 *
 * @example
 * const llmCall = lendSlotWhileWaiting(agent.llmCall, slot);
 */
export function lendSlotWhileWaiting(llmCall: LlmCall, slot: Slot): LlmCall {
  return (request, signal, options) =>
    llmCall(request, signal, {
      ...options,
      onGateWait: () => {
        const takeBack = slot.lend();
        const endCallers = options?.onGateWait?.();
        return () => {
          endCallers?.();
          takeBack();
        };
      },
    });
}
