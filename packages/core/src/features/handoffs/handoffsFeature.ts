import type { AgentMessage } from "../../types/index.js";
import type { FeatureHold, FeatureRun, HeldSession, OpenedRun, RunFeature } from "../runFeature.js";
import type { HandoffStore, StoredHandoff } from "./handoffStore.js";
import { findHandoff, HandoffToolView, type TransferFn, transferredText } from "./handoffTools.js";

/** What the handoffs feature is built with. */
export interface HandoffsFeatureDeps {
  store: HandoffStore;
}

/** A hold's handoff state: the agents it may hand off to, and the current batch's transfer. */
interface HandoffState {
  handoffs: readonly string[];
  /** The target of the current batch's first `transfer_to_` call, while that batch runs. */
  batchHandoff?: string;
}

/**
 * Handoffs: an agent's `handoffs` are offered as `transfer_to_<name>` tools; the batch whose
 * results carry the first transfer that took is stored with its `agentHandoff` event in one
 * step (`appendHandoff`), and the run goes on as the target agent.
 *
 * How it composes: inside a child run, a handoff changes the child's agent and keeps its place
 * in the tree; a transfer call waiting for approval parks the batch, and the handoff takes
 * effect when it is appended; a follow-up is answered by the session's current agent; an abort
 * stops the run as any; the run's budget (with its requests' own) applies to the target too.
 */
export function handoffsFeature(deps: HandoffsFeatureDeps): RunFeature {
  return { name: "handoffs", hold: (session) => handoffsHold(deps, session) };
}

function handoffsHold(deps: HandoffsFeatureDeps, session: HeldSession): FeatureHold {
  const state: HandoffState = { handoffs: [] };
  return {
    async takeAgent(taken) {
      const targets = taken.handoffs ?? [];
      state.handoffs = targets.map((target) => target.name);
      if (targets.length === 0) return;
      const from = taken.agent.name;
      session.state.tools = new HandoffToolView(
        session.state.tools,
        from,
        targets,
        transferOf(session, state),
      );
    },
    openRun: async (run) => openHandoffRun(deps, session, run, state),
  };
}

async function openHandoffRun(
  deps: HandoffsFeatureDeps,
  session: HeldSession,
  run: OpenedRun,
  state: HandoffState,
): Promise<FeatureRun> {
  state.batchHandoff = undefined;
  return {
    async beforeAppend(messages) {
      const handoff = handoffOf(session, run, state, messages);
      state.batchHandoff = undefined;
      if (!handoff) return undefined;
      return {
        write: (expect) =>
          deps.store.appendHandoff(session.sessionId, session.token, messages, handoff, expect),
        after: async () => {
          await run.switchAgent();
          const { from, to } = handoff.event;
          session.log.info(
            { sessionId: session.sessionId, runId: run.runId, from, to },
            "session handed over",
          );
        },
      };
    },
  };
}

/**
 * The handoff a batch's results make (`findHandoff`: its first `transfer_to_` result that
 * took, to one of the agent's handoffs), as the store appends it with them; `undefined` when
 * the batch hands nothing over.
 */
function handoffOf(
  session: HeldSession,
  run: OpenedRun,
  state: HandoffState,
  messages: AgentMessage[],
): StoredHandoff | undefined {
  const handoff = findHandoff(messages, state.handoffs);
  const from = session.agent()?.name;
  if (!handoff || from === undefined) return undefined;
  return { runId: run.runId, event: { type: "agentHandoff", from, ...handoff } };
}

/**
 * What a `transfer_to_<to>` call does: records `to` as its batch's handoff, which takes effect
 * once the batch's results are stored (`handoffOf`). Only a batch's first transfer takes: a
 * later one of the same batch gets an error result naming the first.
 */
function transferOf(session: HeldSession, state: HandoffState): TransferFn {
  return (to) => {
    const first = state.batchHandoff;
    if (first !== undefined)
      throw new Error(
        `not transferred to "${to}": this batch already transfers to "${first}" (only a batch's first transfer takes effect)`,
      );
    state.batchHandoff = to;
    return {
      content: [{ type: "text", text: transferredText(to) }],
      details: { handoff: { from: session.agent()?.name, to } },
    };
  };
}
