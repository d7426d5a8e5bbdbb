import { defaultAgentOf } from "../../agents/defaultAgent.js";
import type { CoordinatorRequest } from "../../protocol/coordinatorJob.js";
import { InvalidCoordinatorJobError } from "../../protocol/errors.js";
import type { SessionAgents } from "../../state/sessionAgents.js";

/** What checking a request's agent needs: the agents served, and the agents of sessions. */
export interface AgentCheck {
  /** The names of the agents this coordinator serves. */
  known: readonly string[];
  sessions: SessionAgents;
  /**
   * Whether a request's input was recorded already (`SessionStore.isRecorded`): a request
   * delivered again after its session was handed off is not refused for naming the old agent.
   */
  recorded?: (sessionId: string, requestId: string) => Promise<boolean>;
}

/**
 * Why a request naming an agent this coordinator does not serve is refused, or `undefined`
 * when it is served (or names none). Checked before anything is recorded.
 *
 * @example unknownAgent({ agent: "x", … }, check)?.message // 'unknown agent "x" (known: default, ops)'
 */
export function unknownAgent(
  request: CoordinatorRequest,
  check: AgentCheck,
): InvalidCoordinatorJobError | undefined {
  if (request.agent === undefined || check.known.includes(request.agent)) return undefined;
  return new InvalidCoordinatorJobError(
    "agent",
    `unknown agent "${request.agent}" (known: ${check.known.join(", ")})`,
  );
}

/** The agent a request asks for: the one it names, else the coordinator's default, if any. */
function wantedAgentOf(request: CoordinatorRequest, check: AgentCheck): string | undefined {
  return request.agent ?? defaultAgentOf(check.known);
}

/**
 * The agent the request goes to: its session's current agent (the one that started it, or the
 * last one it was handed off to), recorded now for a new session as the request's agent, or,
 * when it names none, the coordinator's default (`defaultAgentOf`: `default`, or its only
 * agent). A request naming no agent for a new session on a coordinator without a default is
 * refused, saying so (never run as an agent it does not serve), and so is one naming no agent
 * for a session whose agent this coordinator does not serve (its agents file differs from the
 * one that started the session). A request naming an agent other than the session's current one
 * is refused, the error saying which agent the session belongs to; unless its input `requestId`
 * was recorded already (the job delivered again after a handoff). Redis errors are thrown.
 * `sent`: the claim of this session for this request, sent already (`claimNewSessionAgent`).
 */
export async function claimSessionAgent(
  request: CoordinatorRequest,
  sessionId: string,
  requestId: string,
  check: AgentCheck,
  sent?: EarlyAgentClaim,
): Promise<string | InvalidCoordinatorJobError> {
  const wanted = wantedAgentOf(request, check);
  if (wanted === undefined) return continuedAgent(sessionId, check);
  const owner = await (sent?.owner ?? check.sessions.claim(sessionId, wanted));
  if (request.agent === undefined) return servedOwner(sessionId, owner, check);
  if (owner === request.agent) return owner;
  if (await check.recorded?.(sessionId, requestId)) return owner;
  return new InvalidCoordinatorJobError(
    "agent",
    `session ${sessionId} belongs to agent "${owner}"`,
  );
}

/** The claim of a new session's agent, sent before the session is known to be used. */
export interface EarlyAgentClaim {
  /** The agent claimed: what `owner` resolves for a session no request was recorded in yet. */
  wanted: string;
  /** What `SessionAgents.claim` resolves: the session's agent (the one wanted, for a new session). */
  owner: Promise<string>;
  /** Deletes the claim again: the session was not used (the job had one already). Never throws. */
  takeBack(): void;
}

/**
 * Sends the claim of `sessionId`, a random session no request was recorded in yet, for the
 * agent `request` goes to, so that it goes out beside the claim of the session itself (one
 * round trip for both: `RequestJobs`); `undefined` when that agent needs a read first (no agent
 * named, and no default: `claimSessionAgent` reads the session's). Hand it to
 * `claimSessionAgent` when the session is used; else call `takeBack`.
 */
export function claimNewSessionAgent(
  request: CoordinatorRequest,
  sessionId: string,
  check: AgentCheck,
): EarlyAgentClaim | undefined {
  const wanted = wantedAgentOf(request, check);
  if (wanted === undefined) return undefined;
  const owner = check.sessions.claim(sessionId, wanted);
  owner.catch(() => undefined); // read by `claimSessionAgent`, or taken back
  return {
    wanted,
    owner,
    takeBack: () =>
      void owner
        .catch(() => undefined) // a failed claim may still have landed: deleted all the same
        .then(() => check.sessions.forget(sessionId))
        .catch(() => undefined), // left to its time to live: a random id nobody holds
  };
}

/**
 * The current agent of a session a request naming no agent continues, on a coordinator
 * without a default agent; the refusal naming the agents to choose from for a new session.
 */
async function continuedAgent(
  sessionId: string,
  check: AgentCheck,
): Promise<string | InvalidCoordinatorJobError> {
  const current = await check.sessions.read(sessionId);
  if (current !== undefined)
    return servedOwner(sessionId, await check.sessions.claim(sessionId, current), check);
  return new InvalidCoordinatorJobError(
    "agent",
    `a new session needs an agent: none is named, and no agent is named "default" (known: ${check.known.join(", ")})`,
  );
}

/**
 * `owner`, the current agent of a session a request naming no agent continues, when this
 * coordinator serves it; else the refusal saying so (the run would otherwise end in an error
 * after a model call it never made).
 */
function servedOwner(
  sessionId: string,
  owner: string,
  check: AgentCheck,
): string | InvalidCoordinatorJobError {
  if (check.known.includes(owner)) return owner;
  return new InvalidCoordinatorJobError(
    "agent",
    `session ${sessionId} belongs to agent "${owner}", which this coordinator does not serve (known: ${check.known.join(", ")}; the coordinators' YIEM_AGENTS differ?)`,
  );
}
