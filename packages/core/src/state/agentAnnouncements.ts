import type { AgentSummary } from "../agents/defineAgent.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";

/** What one coordinator says it serves: its agents and their digest, and when it said so. */
export interface AgentAnnouncement {
  coordinatorId: string;
  /** Equal on coordinators whose definitions agree (`AgentRegistry.digest`). */
  digest: string;
  agents: AgentSummary[];
  /** Epoch milliseconds of the announcement. */
  seenAt: number;
}

/** How often a running coordinator announces its agents. */
export const AGENT_ANNOUNCE_MS = 5000;

/** An announcement older than this is from a coordinator no longer running. */
export const AGENT_ANNOUNCEMENT_LIVE_MS = 3 * AGENT_ANNOUNCE_MS;

/** Announcements older than this are removed by whoever announces next. */
const STALE_MS = 3600_000;

/** The hash lives a day past its last announcement. */
const HASH_TTL_MS = 24 * 3600_000;

function parse(value: string): AgentAnnouncement | undefined {
  try {
    return JSON.parse(value) as AgentAnnouncement;
  } catch {
    return undefined;
  }
}

/** Every announcement in the hash, stale ones included. */
async function readAll(redis: RedisClient, keys: ClusterKeys): Promise<AgentAnnouncement[]> {
  const fields = await redis.hgetall(keys.agentAnnouncements);
  return Object.values(fields).flatMap((value) => parse(value) ?? []);
}

/**
 * Records what a coordinator serves (one field of the `agentAnnouncements` hash), removes
 * announcements stale for an hour, and returns the live announcements of the others.
 */
export async function announceAgents(
  redis: RedisClient,
  keys: ClusterKeys,
  announcement: AgentAnnouncement,
): Promise<AgentAnnouncement[]> {
  const key = keys.agentAnnouncements;
  await redis.hset(key, announcement.coordinatorId, JSON.stringify(announcement));
  await redis.pexpire(key, HASH_TTL_MS);
  const all = await readAll(redis, keys);
  const stale = all.filter((a) => announcement.seenAt - a.seenAt > STALE_MS);
  if (stale.length > 0) await redis.hdel(key, ...stale.map((a) => a.coordinatorId));
  return all.filter(
    (a) =>
      a.coordinatorId !== announcement.coordinatorId &&
      announcement.seenAt - a.seenAt <= AGENT_ANNOUNCEMENT_LIVE_MS,
  );
}

/** Removes a stopping coordinator's announcement. */
export async function withdrawAgents(
  redis: RedisClient,
  keys: ClusterKeys,
  coordinatorId: string,
): Promise<void> {
  await redis.hdel(keys.agentAnnouncements, coordinatorId);
}

/**
 * The announcements of the running coordinators (seen in the last `AGENT_ANNOUNCEMENT_LIVE_MS`),
 * sorted by coordinator id. Plain reads: a read-only ACL suffices.
 */
export async function readAgentAnnouncements(
  redis: RedisClient,
  keys: ClusterKeys,
  now = Date.now(),
): Promise<AgentAnnouncement[]> {
  const all = await readAll(redis, keys);
  return all
    .filter((a) => now - a.seenAt <= AGENT_ANNOUNCEMENT_LIVE_MS)
    .sort((a, b) => a.coordinatorId.localeCompare(b.coordinatorId));
}
