import type { PipelinedTranscript } from "../../state/pipelinedTranscript.js";
import type { AgentEvent, AgentMessage, UserMessage } from "../../types/index.js";
import type { DeferredAnswer } from "./deferredAnswer.js";
import type { FeatureRuns } from "./featureRuns.js";
import type { OpenRun } from "./runEvents.js";
import type { SessionHold } from "./sessionHold.js";

/** What the transcript's writers tell the run around them. */
export interface TranscriptHooks {
  /** The inputs a drain took into the run. */
  onDrained: (requestIds: string[]) => Promise<void>;
  /** Once, after the first batch is appended (a resumed run's batch). */
  afterResumedBatch?: () => void;
  /** An answer kept back for the run's next write (`DeferredAnswer`), and how its held events go out. */
  deferred?: { answer: DeferredAnswer; publish: (event: AgentEvent) => Promise<void> };
}

/**
 * The loop's view of the session's transcript: every write goes to Redis first, fenced. A
 * batch's results are appended without waiting for the reply; the next write goes right
 * behind them, guarded (`PipelinedTranscript`). An answer without tool calls goes with the
 * run's next write (`DeferredAnswer`: the close's script, most often). Before a batch is appended the features may
 * stop the run (a batch with calls waiting parks it) or store it their own way (a handoff).
 * After the run's first drain, a turn's model call goes out while its drain is on its way
 * (`AgentLoopDeps.callAheadOfDrain`).
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
  // The run's first drain sets its limits (tenant, budgets: `onDrained`): no call goes ahead of it.
  let drainedOnce = false;
  /**
   * Sends a kept-back answer (`DeferredAnswer`) ahead of the write about to go, without
   * waiting (the write goes right behind it, guarded); the returned function, called once
   * that write is done or failed, publishes the answer's held events if it landed.
   */
  const sendDeferred = (): (() => Promise<void>) => {
    const waiting = hooks.deferred?.answer.take();
    if (!waiting) return async () => undefined;
    let landed: Promise<unknown> = Promise.resolve(false);
    // The answer is in `state.messages` already: the length before it is one less.
    transcript.appendBehind((expect, known) => {
      const before = expect === undefined ? undefined : expect - 1;
      const sent = deps.store.append(sessionId, token, waiting.message, before, known - 1);
      landed = sent;
      return sent;
    });
    return async () => {
      if ((await landed.catch(() => false)) !== true) return;
      for (const event of waiting.events) await hooks.deferred?.publish(event);
    };
  };
  /** Runs `write` behind a kept-back answer, if any, then publishes that answer's events. */
  const behindDeferred = async <T>(write: () => Promise<T>): Promise<T> => {
    const published = sendDeferred();
    try {
      return await write();
    } finally {
      await published();
    }
  };
  return {
    drainInput: async () => {
      await deps.syncWrittenTools?.();
      const drained =
        joined ??
        (await behindDeferred(() =>
          transcript.write((expect) =>
            deps.store.drainInputs(sessionId, token, expect, start.order),
          ),
        ));
      joined = undefined;
      requestIds.push(...drained.inputIds);
      await hooks.onDrained(drained.inputIds);
      const moved = [...opening, ...drained.messages];
      opening = []; // the opening message is in the transcript already (startRun put it there)
      state.messages.push(...drained.messages);
      drainedOnce = true;
      return moved;
    },
    // A model call may go out while a drain is on its way to Redis, unless written tools are
    // synced before each call (the sync may change the run's tools).
    callAheadOfDrain: () => drainedOnce && !deps.syncWrittenTools,
    appendMessages: async (messages: AgentMessage[]) => {
      await behindDeferred(() => transcript.settle());
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
      // An answer without tool calls waits for the run's next write (its close, most often).
      if (hooks.deferred?.answer.defers(message)) {
        hooks.deferred.answer.defer(message);
        state.messages.push(message);
        return;
      }
      await behindDeferred(() =>
        transcript.write((expect, known) =>
          deps.store.append(sessionId, token, message, expect, known),
        ),
      );
      state.messages.push(message);
    },
  };
}
