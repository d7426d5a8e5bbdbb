import type { AgentPathLink } from "../features/childRuns/protocol.js";
import type { AgentEvent } from "../types/index.js";
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

/**
 * A bus event as the UTF-8 bytes of its JSON text, for a relay that passes events on without
 * reading them (the gateway's server-sent events; `YiemClient.encodedEvents`): the fields a
 * relay frames it by, read once, and `json`, the event's JSON on one line (no line break).
 * A live event's `json` is one buffer shared by every reader of it: never change it.
 */
export interface EncodedBusEvent {
  /** `BusEvent.seq`. */
  seq: number;
  /** `BusEvent.type`. */
  type: BusEvent["type"];
  /** `BusEvent.live`. */
  live?: true;
  /** The event's JSON (`BusEvent`), UTF-8. */
  json: Buffer;
}

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
  const json = withOrigin(event, origin, ts);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: shorter text cannot hold arguments to cut.
  if (json.length * 3 <= EVENT_ARGUMENTS_MAX_BYTES) return json;
  const cut = cutEventArguments(event);
  return cut === event ? json : withOrigin(cut, origin, ts);
}

/** An origin's fields as JSON text to append (`,"sessionId":"s1",…`), and its keys plus `ts`. */
interface OriginTail {
  keys: string[];
  tail: string;
}

/**
 * The tails of the origins seen: a publisher passes the same origin object with each event, and
 * an origin is never changed once an event has gone out with it.
 */
const tails = new WeakMap<EventOrigin, OriginTail>();

function originTail(origin: EventOrigin): OriginTail {
  const known = tails.get(origin);
  if (known) return known;
  const keys = ["ts"];
  let tail = "";
  for (const [key, value] of Object.entries(origin)) {
    keys.push(key);
    if (value !== undefined) tail += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  const made = { keys, tail };
  tails.set(origin, made);
  return made;
}

/**
 * `JSON.stringify({ ...event, ...origin, ts })`, the same text, written by appending the
 * origin's fields to the event's JSON: a spread copy made stringify about three times slower,
 * and every event of a run goes through here. An event that holds a field of the origin (or
 * `ts`) takes the spread, where the origin's value replaces it in place.
 */
function withOrigin(event: AgentEvent, origin: EventOrigin, ts: number): string {
  const fields = event as object;
  const { keys, tail } = originTail(origin);
  for (const key of keys) if (key in fields) return JSON.stringify({ ...event, ...origin, ts });
  const json = JSON.stringify(event);
  if (json === "{}") return `{${tail.slice(1)}${tail ? "," : ""}"ts":${ts}}`;
  return `${json.slice(0, -1)}${tail},"ts":${ts}}`;
}
