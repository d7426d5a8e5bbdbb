import { DEFAULT_AGENT } from "../../agents/defineAgent.js";
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
  recorded?: (sessionId: string, inputId: string) => Promise<boolean>;
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

/**
 * The agent the request goes to: its session's current agent (recorded now as the request's
 * agent, or `default` when it names none, for a session that has none yet). A request naming
 * an agent other than the session's current one (the one that started it, or the last one it
 * was handed off to) is refused, the error saying which agent the session belongs to; unless
 * its input `inputId` was recorded already (the job delivered again after a handoff). Redis
 * errors are thrown.
 */
export async function claimSessionAgent(
  request: CoordinatorRequest,
  sessionId: string,
  inputId: string,
  check: AgentCheck,
): Promise<string | InvalidCoordinatorJobError> {
  const owner = await check.sessions.claim(sessionId, request.agent ?? DEFAULT_AGENT);
  if (request.agent === undefined || owner === request.agent) return owner;
  if (await check.recorded?.(sessionId, inputId)) return owner;
  return new InvalidCoordinatorJobError(
    "agent",
    `session ${sessionId} belongs to agent "${owner}"`,
  );
}
