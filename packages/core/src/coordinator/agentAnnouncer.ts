import type { AgentRegistry } from "../agents/agentRegistry.js";
import type { Logger } from "../ops/logger.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import {
  AGENT_ANNOUNCE_MS,
  type AgentAnnouncement,
  announceAgents,
  withdrawAgents,
} from "../state/agentAnnouncements.js";

/** What announcing a coordinator's agents needs. */
export interface AgentAnnouncerOptions {
  command: RedisClient;
  keys: ClusterKeys;
  coordinatorId: string;
  registry: AgentRegistry;
  log: Logger;
}

/** A running announcer: `stop` withdraws the announcement. */
export interface AgentAnnouncer {
  stop(): Promise<void>;
}

/** Logs, once per set of differing coordinators, that their definitions differ from ours. */
function disagreementLogger(options: AgentAnnouncerOptions, digest: string) {
  let reported = "";
  return (others: AgentAnnouncement[]) => {
    const differing = others.filter((a) => a.digest !== digest);
    const signature = differing.map((a) => `${a.coordinatorId}=${a.digest}`).join(",");
    if (signature === reported) return;
    reported = signature;
    if (differing.length === 0) return;
    options.log.warn(
      {
        digest,
        agents: options.registry.names(),
        differing: differing.map((a) => ({
          coordinatorId: a.coordinatorId,
          digest: a.digest,
          agents: a.agents.map((agent) => agent.name),
        })),
      },
      "coordinators disagree on the agent definitions (see yiem agents)",
    );
  };
}

/**
 * Announces every `AGENT_ANNOUNCE_MS` which agents this coordinator serves and the digest of
 * their definitions (`state/agentAnnouncements.ts`), and logs a warning when a running
 * coordinator announces another digest. The first announcement is made before it resolves;
 * a failed one is logged at debug and made again on the next tick.
 */
export async function startAgentAnnouncer(options: AgentAnnouncerOptions): Promise<AgentAnnouncer> {
  const { command, keys, coordinatorId, registry, log } = options;
  const digest = registry.digest();
  const agents = registry.summaries();
  const report = disagreementLogger(options, digest);
  const announce = () =>
    announceAgents(command, keys, { coordinatorId, digest, agents, seenAt: Date.now() })
      .then(report)
      .catch((err: unknown) =>
        log.debug({ err: (err as Error).message }, "could not announce the agents; retrying"),
      );
  await announce();
  const timer = setInterval(() => void announce(), AGENT_ANNOUNCE_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await withdrawAgents(command, keys, coordinatorId).catch(() => undefined);
    },
  };
}
