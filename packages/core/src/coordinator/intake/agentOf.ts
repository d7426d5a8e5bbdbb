import type { CoordinatorRequest } from "../../protocol/coordinatorJob.js";
import { InvalidCoordinatorJobError } from "../../protocol/errors.js";
import type { SessionAgents } from "../../state/sessionAgents.js";

/** What checking a request's agent needs: the agents served, and the agents of sessions. */
export interface AgentCheck {
  /** The names of the agents this coordinator serves. */
  known: readonly string[];
  sessions: SessionAgents;
}

/**
 * Why a request naming an agent this coordinator does not serve is refused, or `undefined`
 * when it is served. Checked before anything is recorded.
 *
 * @example unknownAgent({ agent: "x", … }, check)?.message // 'unknown agent "x" (known: default, ops)'
 */
export function unknownAgent(
  request: CoordinatorRequest,
  check: AgentCheck,
): InvalidCoordinatorJobError | undefined {
  if (check.known.includes(request.agent)) return undefined;
  return new InvalidCoordinatorJobError(
    "agent",
    `unknown agent "${request.agent}" (known: ${check.known.join(", ")})`,
  );
}

/**
 * Records the request's agent as its session's when the session has none, and says why the
 * request is refused when the session belongs to another agent (`undefined`: it may go on).
 * Redis errors are thrown.
 */
export async function claimSessionAgent(
  request: CoordinatorRequest,
  sessionId: string,
  check: AgentCheck,
): Promise<InvalidCoordinatorJobError | undefined> {
  const owner = await check.sessions.claim(sessionId, request.agent);
  if (owner === request.agent) return undefined;
  return new InvalidCoordinatorJobError(
    "agent",
    `session ${sessionId} belongs to agent "${owner}"`,
  );
}
