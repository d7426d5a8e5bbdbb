import type { CoordinatorRequest, RunAnswer } from "../../protocol/coordinatorJob.js";
import { InvalidCoordinatorJobError } from "../../protocol/errors.js";
import { anyError, retryTransient } from "../../redis/retryTransient.js";
import type { AssistantMessage } from "../../types/index.js";
import type { FeatureIntake } from "../runFeature.js";
import type { ChildRunsFeatureDeps } from "./childRunsDeps.js";
import { childOutcome, childStatusOf, type ParentCall, readParentCall } from "./protocol.js";

/**
 * The child runs' part of the request intake: a request naming a `parent` is taken in only when
 * the parent proves it (its call waits for this child session), and then records its parent
 * call in its session before its input; its answer is delivered to that call before its job completes; a
 * refused child's request still answers the call, with the reason.
 */
export function createChildIntake(deps: ChildRunsFeatureDeps): FeatureIntake {
  return {
    admits: (request) => admitChild(deps, request),
    async beforeRecord(sessionId, request) {
      if (request.parent) await deps.store.writeParent(sessionId, request.parent);
    },
    takesAnswer: (request) => request.parent !== undefined,
    async answered({ sessionId, agent, request, answer }) {
      if (request.parent) await deliverToParent(deps, request.parent, sessionId, agent, answer);
    },
    refused: (data, reason) => answerRefusedChild(deps, data, reason),
  };
}

/**
 * Refuses a request naming a `parent` the parent did not make (`ChildRunStore.disproveParent`),
 * before anything is written for it: so no parent mark, and no event at a root, comes of a
 * forged `parent`. A child run's request always names its session.
 */
async function admitChild(
  deps: ChildRunsFeatureDeps,
  request: CoordinatorRequest,
): Promise<Error | undefined> {
  const { parent, sessionId } = request;
  if (!parent) return undefined;
  if (!sessionId) return new InvalidCoordinatorJobError("parent", "a child run names its session");
  const why = await deps.store.disproveParent(sessionId, request.agent, parent);
  return why ? new InvalidCoordinatorJobError("parent", `not proved: ${why}`) : undefined;
}

/**
 * Gives a child run's answer to the parent call waiting for it (at most once, however often
 * the child's job is delivered) and resumes the parent when no call of its batch waits any
 * more, before the child's job completes: a coordinator that dies in between leaves the job
 * to be delivered again, which finds the answer stored and delivers it again (a no-op).
 * Retries Redis errors while the job is held.
 */
async function deliverToParent(
  deps: ChildRunsFeatureDeps,
  parent: ParentCall,
  sessionId: string,
  agent: string,
  answer: RunAnswer,
): Promise<void> {
  const outcome = childOutcome(agent, sessionId, answer);
  const ended = { status: childStatusOf(answer.response.stopReason), usage: answer.usage };
  const delivered = await retryTransient(
    () => deps.store.deliver(parent, sessionId, outcome, ended),
    {
      attempts: Number.POSITIVE_INFINITY,
      retryIf: anyError,
      onRetry: (err) =>
        deps.log.warn(
          { sessionId, parent: parent.sessionId, err: (err as Error).message },
          "could not deliver a child run's answer; retrying",
        ),
    },
  );
  deps.log.info(
    {
      sessionId,
      agent,
      parent: parent.sessionId,
      callKey: parent.callKey,
      delivered: delivered.kind,
    },
    "child run answered its parent",
  );
  if (delivered.kind === "notWaiting") return;
  if (delivered.kind === "known" || delivered.resume) await deps.resume(parent.sessionId);
}

/**
 * A refused child run's request (an input over the cap, an agent this coordinator does not
 * serve) still answers its parent's call, with an error result naming the reason, so the
 * parent does not wait for a child that never runs.
 */
async function answerRefusedChild(
  deps: ChildRunsFeatureDeps,
  data: unknown,
  reason: string,
): Promise<void> {
  const fields = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  let parent: ParentCall | undefined;
  try {
    parent = readParentCall(fields.parent);
  } catch {
    return;
  }
  const { sessionId, agent } = fields;
  if (!parent || typeof sessionId !== "string" || typeof agent !== "string") return;
  const response: AssistantMessage = {
    role: "assistant",
    content: [{ type: "text", text: reason }],
    stopReason: "error",
    errorMessage: reason,
    timestamp: Date.now(),
  };
  await deliverToParent(deps, parent, sessionId, agent, { response }).catch(() => undefined);
}
