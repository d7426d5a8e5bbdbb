/** The AG-UI face tests' runner: an `HttpAgent` run with every event it received kept. */
import type { BaseEvent, HttpAgent, Interrupt } from "@ag-ui/client";

/**
 * Runs `agent` (with `params`), keeping every event it received, in order, and the interrupts
 * its run finished with; `types` lists the events' types.
 */
export async function runKeeping(
  agent: HttpAgent,
  params: Parameters<HttpAgent["runAgent"]>[0] = {},
) {
  const events: BaseEvent[] = [];
  const interrupts: Interrupt[] = [];
  const outcome = await agent.runAgent(params, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (finished) => {
      if (finished.outcome === "interrupt") interrupts.push(...finished.interrupts);
    },
  });
  return { ...outcome, events, interrupts, types: events.map((e) => e.type as string) };
}
