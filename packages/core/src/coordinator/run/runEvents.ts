import type { ServedAgent } from "../../agents/agentRegistry.js";
import { findUnansweredToolCalls } from "../../loop/unansweredToolCalls.js";
import { type EventPublisher, readEventsAfter } from "../../state/eventBus.js";
import type { RunStart } from "../../state/sessionStore.js";
import type { AgentEndEvent, AgentEvent } from "../../types/index.js";
import type { DeferredAnswer } from "./deferredAnswer.js";
import type { FeatureRuns } from "./featureRuns.js";
import type { SessionHold } from "./sessionHold.js";

/** A run being opened or resumed (not idle, parked or settling). */
export type OpenRun = Extract<RunStart, { kind: "new" | "resume" }>;

/** What a run's emitter keeps back instead of publishing. */
export interface KeptBack {
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
 * over, so a watcher sees each call end once, from the holder that finished it), except a
 * `messageEnd`: its message is in the transcript once the loop emits it (an append refused
 * for a lost lease throws first), and the next holder resumes from the transcript without
 * announcing it again, so it is published even when the lease was lost meanwhile. A remote
 * call's end event names its worker itself. Holds `agentEnd` back for the caller, and what a
 * feature keeps back (`FeatureRun.holdsBack`), and what `deferred` holds while an answer waits
 * for the run's next write. Streamed text (`messageUpdate`) goes out live only: the replay
 * stream gets the whole message once, in its `messageEnd`.
 */
export function runEmitter(
  hold: SessionHold,
  publisher: EventPublisher,
  features: FeatureRuns,
  keptBack: KeptBack,
  /** Holds the events emitted while an answer waits for the run's next write. */
  deferred?: DeferredAnswer,
) {
  return (emitted: AgentEvent): Promise<void> => {
    const event = namedAgentStart(emitted, hold.agent);
    // A holder that lost or handed over the session stays silent: the next holder reports,
    // but not what the transcript already holds (a message whose append landed).
    const silent = hold.lease.lost || hold.handedOver;
    if (silent && event.type !== "messageEnd") return Promise.resolve();
    if (features.holdsBack(event)) return Promise.resolve();
    hold.deps.observe?.(event);
    if (event.type === "agentEnd") {
      keptBack.agentEnd = event;
      return Promise.resolve();
    }
    if (event.type === "messageUpdate") return publisher.emitLive(event);
    // A resumed call whose start a previous holder already published is not started twice.
    if (event.type === "toolExecStart" && keptBack.startedBefore.delete(event.toolCallId))
      return Promise.resolve();
    if (deferred?.hold(event)) return Promise.resolve();
    return publisher.emit(event);
  };
}

/**
 * Publishes an event held with a kept-back answer (`DeferredAnswer`) once the answer landed: a
 * holder that lost or handed over the session meanwhile publishes its `messageEnd` only, as
 * `runEmitter` would have.
 */
export function publishHeldEvent(
  hold: SessionHold,
  publisher: EventPublisher,
  event: AgentEvent,
): Promise<void> {
  if ((hold.lease.lost || hold.handedOver) && event.type !== "messageEnd") return Promise.resolve();
  return publisher.emit(event);
}

/** On resume: the ids of the calls the run left unanswered (a previous holder may have run them). */
export function unansweredCallIds(hold: SessionHold, start: OpenRun): Set<string> {
  const pending =
    start.kind === "resume" ? findUnansweredToolCalls(hold.state.messages) : undefined;
  return new Set(pending?.calls.map((call) => call.id));
}

/** On resume: the `unanswered` calls of this run whose `toolExecStart` a previous holder published. */
export async function startedBefore(
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
