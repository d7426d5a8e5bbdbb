import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { SESSION_TTL_SECONDS } from "./sessionStore.js";

/** How long a session's agent is kept after its last request: as long as its transcript. */
const SESSION_AGENT_TTL_S = SESSION_TTL_SECONDS;

/**
 * The agent each session belongs to, its current agent (`sessionAgent` key): set by the
 * session's first request, changed only by a handoff (stored with the batch that made it:
 * `SessionStore.appendHandoff`), kept 30 days after the last request.
 */
export class SessionAgents {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ClusterKeys,
  ) {}

  /**
   * The agent session `sessionId` belongs to: `agent` when the session had none (it is
   * recorded now), else the one recorded. Either way its time to live starts again.
   *
   * @example await agents.claim("s-1", "support") // "support", or "ops" if ops started s-1
   */
  async claim(sessionId: string, agent: string): Promise<string> {
    const key = this.keys.sessionAgent(sessionId);
    const before = await this.redis.set(key, agent, "EX", SESSION_AGENT_TTL_S, "NX", "GET");
    if (before !== null && before !== agent) return before;
    if (before !== null) await this.redis.expire(key, SESSION_AGENT_TTL_S);
    return agent;
  }

  /** The agent recorded for `sessionId`, if any (sessions from before agents have none). */
  async read(sessionId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.sessionAgent(sessionId))) ?? undefined;
  }
}
