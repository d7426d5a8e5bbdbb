import type { ServedAgent } from "../../agents/agentRegistry.js";
import { SessionStoreError } from "../../protocol/errors.js";
import { type EventTree, publishEvent } from "../../state/eventBus.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type {
  CallWait,
  FeatureHold,
  FeatureRun,
  FinishedRun,
  HeldSession,
  OpenedRun,
  RunFeature,
} from "../runFeature.js";
import { calledAgentOf, withAgentCallTools } from "./agentCallTools.js";
import { type ChildCallOptions, startChildCall, type TreePlace } from "./childCalls.js";
import { createChildIntake } from "./childIntake.js";
import type { ChildRunsFeatureDeps } from "./childRunsDeps.js";

export type { ChildRunsFeatureDeps } from "./childRunsDeps.js";

import type { ChildRunStore } from "./childRunStore.js";

/**
 * Agents calling agents: an agent's `agents` are offered as `agent__<name>` tools; a call of
 * one starts a child run (a session of its own, any coordinator runs it) and waits for its
 * answer, which the intake delivers to the parent's call when the child's request is answered.
 *
 * How it composes: a child's calls awaiting approval park the child, and the root's owner
 * decides them through the tree; a handoff inside a child keeps the child's place in the
 * tree; a follow-up to a parent waits while its batch waits for children; an abort of the
 * root reaches every open child (and a child opened after it, `abortedAtOpen`); a child's
 * budget is what its parent's run has left when it starts.
 */
export function childRunsFeature(deps: ChildRunsFeatureDeps): RunFeature {
  return {
    name: "childRuns",
    hold: (session) => childRunsHold(deps, session),
    intake: createChildIntake(deps),
  };
}

function childRunsHold(deps: ChildRunsFeatureDeps, session: HeldSession): FeatureHold {
  let place: TreePlace = { rootSessionId: session.sessionId, depth: 0, path: [] };
  let callees = new Map<string, ServedAgent>();
  return {
    async takeAgent(taken) {
      if (!deps.callsAgents) return;
      place = (await readPlace(deps, session.sessionId)) ?? place;
      const list = taken.callees ?? [];
      callees = new Map(list.map((callee) => [callee.name, callee])); // a handoff's target may have none
      if (list.length === 0) return;
      session.state.tools = withAgentCallTools(
        session.state.tools,
        list.map((callee) => callee.definition),
      );
    },
    openRun: async (run) => openChildRun(deps, session, run, { place, callees }),
  };
}

/** A child session's place in its tree (its parent call, recorded at its first intake). */
async function readPlace(deps: ChildRunsFeatureDeps, sessionId: string) {
  let parent: Awaited<ReturnType<ChildRunStore["readParent"]>>;
  try {
    parent = await deps.store.readParent(sessionId);
  } catch (err) {
    throw new SessionStoreError(sessionId, err);
  }
  if (!parent) return undefined;
  return {
    rootSessionId: parent.rootSessionId,
    depth: parent.depth,
    path: parent.path ?? [],
    ...(parent.rootRunId ? { rootRunId: parent.rootRunId } : {}),
  };
}

async function openChildRun(
  deps: ChildRunsFeatureDeps,
  session: HeldSession,
  run: OpenedRun,
  tree: { place: TreePlace; callees: ReadonlyMap<string, ServedAgent> },
): Promise<FeatureRun> {
  const eventTree = treeOf(tree.place);
  const { rootSessionId, rootRunId, depth } = tree.place;
  return {
    abortedAtOpen: () => treeAbortedAtOpen(session, run, tree.place),
    ...(eventTree ? { eventTree } : {}),
    ...(depth > 0 && rootRunId ? { treeRoot: { sessionId: rootSessionId, runId: rootRunId } } : {}),
    callWaits: tree.callees.size > 0 ? [childCallWait(deps, session, run, tree)] : [],
    afterFinish: async (finished) => {
      if (eventTree) await showEndAtRoot(deps, session.sessionId, eventTree, finished);
    },
  };
}

/**
 * The `agent__<name>` calls of a run as a `CallWait`: a call whose child answered gets that
 * answer (`decision.outcome`); otherwise its child run is started (once: a resumed batch finds
 * it recorded) and the call waits. A call that cannot start (past the depth cap, an agent not
 * callable here) gets an error result.
 */
function childCallWait(
  deps: ChildRunsFeatureDeps,
  session: HeldSession,
  run: OpenedRun,
  tree: { place: TreePlace; callees: ReadonlyMap<string, ServedAgent> },
): CallWait {
  const options: ChildCallOptions = {
    children: deps.store,
    sessionId: session.sessionId,
    runId: run.runId,
    token: session.token,
    place: tree.place,
    maxDepth: deps.maxDepth,
    callees: tree.callees,
    submit: deps.submit,
    remainingBudget: () => run.remainingBudget(),
    reserveStart: (childSessionId) => run.reserve({ kind: "childRun", childSessionId }),
  };
  return {
    claims: (call) => calledAgentOf(call.tool) !== undefined,
    async settle(call, decision) {
      const callee = calledAgentOf(call.tool) ?? "";
      if (decision) {
        const why = `agent "${callee}" did not answer: ${decision.reason ?? "its call was denied"}`;
        const outcome = decision.outcome ?? { result: createErrorToolResult(why), isError: true };
        return { kind: "answered", decided: true, outcome };
      }
      const started = await startChildCall(options, call, callee);
      return started === "waiting"
        ? { kind: "waiting" }
        : { kind: "answered", decided: false, outcome: started };
    },
  };
}

/** Where a child run's events are seen too (its root, with the way down); none for a root. */
function treeOf(place: TreePlace): EventTree | undefined {
  if (place.depth === 0 || place.path.length === 0) return undefined;
  return { rootSessionId: place.rootSessionId, path: place.path };
}

/**
 * The sessions above a child in its tree, root first (none for a root): where an abort of the
 * tree may be recorded that no coordinator has carried down yet.
 */
function ancestorSessions(place: TreePlace): string[] {
  if (place.depth === 0) return [];
  return [place.rootSessionId, ...place.path.slice(0, -1).map((link) => link.sessionId)];
}

/**
 * Whether a child run's tree was aborted before this run could see it (the runner itself sees a
 * new run that took an `abortOnStart` mark as it opened). Each ancestor is read (`takeAbortRequest`): an abort recorded at the root while
 * no coordinator carried it down (every coordinator down, or none met the parked root yet)
 * aborts the run too, and is marked in it, so a successor that resumes it sees it. An abort
 * that comes after this read reaches the run as any abort of an open child does (its parent
 * marks it and announces it). A Redis failure stops the run before its first model call.
 */
async function treeAbortedAtOpen(
  session: HeldSession,
  run: OpenedRun,
  place: TreePlace,
): Promise<boolean> {
  const ancestors = ancestorSessions(place);
  if (ancestors.length === 0) return false;
  const { store } = run;
  try {
    const marks = await Promise.all(ancestors.map((id) => store.takeAbortRequest(id)));
    if (!marks.includes(true)) return false;
    await store.markRunAborted(session.sessionId);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
  session.log.info(
    { sessionId: session.sessionId, runId: run.runId },
    "child run's tree was aborted",
  );
  return true;
}

/**
 * Shows a child run's `agentEnd` (which `finishRun` publishes in the child's own stream) in its
 * root's stream too. Best effort: a failure loses only this copy.
 */
async function showEndAtRoot(
  deps: ChildRunsFeatureDeps,
  sessionId: string,
  tree: EventTree,
  run: FinishedRun,
): Promise<void> {
  const origin = { sessionId, runId: run.runId, inputIds: run.inputIds, path: tree.path };
  await publishEvent(
    deps.command,
    deps.keys,
    origin,
    run.event,
    deps.streamCaps,
    tree.rootSessionId,
  ).catch(() => undefined);
}
