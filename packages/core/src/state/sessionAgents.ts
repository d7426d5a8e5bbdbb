import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { NO_REPLICA_ACKS, type ReplicaAcks } from "../redis/replicaAcks.js";
import { SESSION_TTL_SECONDS } from "./sessionStore.js";

/** How long a session's agent is kept after its last request: as long as its transcript. */
const SESSION_AGENT_TTL_S = SESSION_TTL_SECONDS;

/**
 * The agent each session belongs to, its current agent (`sessionAgent` key): set by the
 * session's first request, changed only by a handoff (stored with the batch that made it:
 * `HandoffStore.appendHandoff`), kept 30 days after the last request.
 */
export class SessionAgents {
  /** `acks`: the replicas that must acknowledge a session's first claim (none by default). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ClusterKeys,
    private readonly acks: ReplicaAcks = NO_REPLICA_ACKS,
  ) {}

  /**
   * The agent session `sessionId` belongs to: `agent` when the session had none (it is
   * recorded now), else the one recorded. Either way its time to live starts again.
   *
   * @example await agents.claim("s-1", "support") // "support", or "ops" if ops started s-1
   */
  async claim(sessionId: string, agent: string): Promise<string> {
    const key = this.keys.sessionAgent(sessionId);
    const before = await this.setIfNone(key, agent);
    if (before !== null && before !== agent) return before;
    if (before !== null) await this.redis.expire(key, SESSION_AGENT_TTL_S);
    return agent;
  }

  /**
   * SET NX GET, followed on the same node by `WAIT` when replicas must acknowledge: a claim
   * lost in a failover would let a later request claim the session for another agent.
   */
  private async setIfNone(key: string, agent: string): Promise<string | null> {
    if (this.acks.replicas <= 0)
      return this.redis.set(key, agent, "EX", SESSION_AGENT_TTL_S, "NX", "GET");
    const replies = await this.redis
      .pipeline()
      .set(key, agent, "EX", SESSION_AGENT_TTL_S, "NX", "GET")
      .wait(this.acks.replicas, this.acks.timeoutMs)
      .exec();
    const [[err, before] = [null, null], [, acked] = [null, 0]] = replies ?? [];
    if (err) throw err;
    if (Number(acked) < this.acks.replicas) this.acks.onShort?.("sessionAgentClaim", Number(acked));
    return (before as string | null) ?? null;
  }

  /**
   * Forgets the agent of `sessionId`: only for a session no request was ever recorded in (a
   * claim sent ahead for a new session that was not used: `claimNewSessionAgent`).
   */
  async forget(sessionId: string): Promise<void> {
    await this.redis.del(this.keys.sessionAgent(sessionId));
  }

  /** The agent recorded for `sessionId`, if any (sessions from before agents have none). */
  async read(sessionId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.sessionAgent(sessionId))) ?? undefined;
  }
}
