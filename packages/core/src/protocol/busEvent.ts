import type { AgentEvent } from "../types/index.js";
import type { AgentPathLink } from "./childRuns.js";
import { cutEventArguments, EVENT_ARGUMENTS_MAX_BYTES } from "./eventArguments.js";

/**
 * An agent event as it travels on the bus: the event plus its session, the run it belongs to,
 * a per-session sequence number (1, 2, 3…, no gaps), the worker that produced it when a worker
 * did, and the publish time. `agentEnd` also lists the input ids its response answers.
 *
 * A live event (`live: true`, the streamed text of `messageUpdate`) is only published, never
 * stored: it takes no number of its own, and its `seq` is that of the stored event it follows,
 * so replays have no gaps and a reader that numbers events must skip it.
 */
export type BusEvent = AgentEvent & {
  sessionId: string;
  runId: string;
  seq: number;
  ts: number;
  workerId?: string;
  inputIds?: string[];
  live?: true;
  /**
   * On an event of a child run seen in its root session's stream: the way from the root down
   * to the child (agent, session, call key of each step). `sessionId` and `runId` are the
   * child's. Absent on the session's own events.
   */
  path?: AgentPathLink[];
};

/** Where an event comes from: everything of `BusEvent` but the event and `seq`. */
export interface EventOrigin {
  sessionId: string;
  runId: string;
  workerId?: string;
  inputIds?: string[];
  /** A child run's way from its root (see `BusEvent.path`). */
  path?: AgentPathLink[];
}

/**
 * The JSON text an event travels as on the bus, without its number (the publishing script
 * splices `seq` in): the event with its large tool-call arguments cut (`cutEventArguments`),
 * its origin, and the publish time `ts`.
 */
export function busEventJson(event: AgentEvent, origin: EventOrigin): string {
  const ts = Date.now();
  const json = JSON.stringify({ ...event, ...origin, ts });
  // UTF-8 takes at most 3 bytes per UTF-16 unit: shorter text cannot hold arguments to cut.
  if (json.length * 3 <= EVENT_ARGUMENTS_MAX_BYTES) return json;
  const cut = cutEventArguments(event);
  return cut === event ? json : JSON.stringify({ ...cut, ...origin, ts });
}
