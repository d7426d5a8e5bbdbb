import type { PipelinedTranscript } from "../../state/pipelinedTranscript.js";
import type { AgentMessage, UserMessage } from "../../types/index.js";
import type { FeatureRuns } from "./featureRuns.js";
import type { OpenRun } from "./runEvents.js";
import type { SessionHold } from "./sessionHold.js";

/** What the transcript's writers tell the run around them. */
export interface TranscriptHooks {
  /** The inputs a drain took into the run. */
  onDrained: (requestIds: string[]) => Promise<void>;
  /** Once, after the first batch is appended (a resumed run's batch). */
  afterResumedBatch?: () => void;
}

/**
 * The loop's view of the session's transcript: every write goes to Redis first, fenced. A
 * batch's results are appended without waiting for the reply; the next write goes right
 * behind them, guarded (`PipelinedTranscript`). Before a batch is appended the features may
 * stop the run (a batch with calls waiting parks it) or store it their own way (a handoff).
 */
export function transcriptWriters(
  hold: SessionHold,
  start: OpenRun,
  requestIds: string[],
  features: FeatureRuns,
  transcript: PipelinedTranscript,
  hooks: TranscriptHooks,
) {
  let onAppended = hooks.afterResumedBatch;
  const { deps, sessionId, token, state } = hold;
  let opening: UserMessage[] = start.kind === "new" ? [start.message] : [];
  // A new run's first drain was done by the script that opened it (`startRun`).
  let joined = start.kind === "new" ? start.joined : undefined;
  return {
    drainInput: async () => {
      await deps.syncWrittenTools?.();
      const drained =
        joined ??
        (await transcript.write((expect) =>
          deps.store.drainInputs(sessionId, token, expect, start.order),
        ));
      joined = undefined;
      requestIds.push(...drained.inputIds);
      await hooks.onDrained(drained.inputIds);
      const moved = [...opening, ...drained.messages];
      opening = []; // the opening message is in the transcript already (startRun put it there)
      state.messages.push(...drained.messages);
      return moved;
    },
    appendMessages: async (messages: AgentMessage[]) => {
      await transcript.settle();
      const plan = await features.beforeAppend(messages);
      if (plan) await transcript.write(plan.write);
      else
        transcript.appendBehind((expect, known) =>
          deps.store.appendMany(sessionId, token, messages, expect, known),
        );
      state.messages.push(...messages);
      await plan?.after?.();
      onAppended?.();
      onAppended = undefined;
      await features.afterAppend(() => transcript.settle());
    },
    appendMessage: async (message: AgentMessage) => {
      await transcript.write((expect, known) =>
        deps.store.append(sessionId, token, message, expect, known),
      );
      state.messages.push(message);
    },
  };
}
