import {
  type AgentMessage,
  type AssistantMessage,
  type ChildRun,
  type ClusterKeys,
  type CoordinatorJobResult,
  clusterKeys,
  connectRedis,
  keyLayoutOf,
  type RedisClient,
  type RedisTarget,
} from "@yiem/core";
import { SessionStore } from "@yiem/core/internal";
import { Queue } from "bullmq";
import { Cluster } from "ioredis";

/** A coordinator-queue job as the checker reads it. */
export interface RequestJobRecord {
  id: string;
  state: string;
  sessionId: string;
  /** The input's text (the chaos plan). */
  input: string;
  followUp: boolean;
  /** The parent call a child run's request answers (`parent` of its data). */
  parent?: { sessionId: string; callKey: string };
  result?: CoordinatorJobResult;
  failedReason?: string;
  /** The response stored in the session for this job's input. */
  storedResponse?: AssistantMessage;
}

/** A job still open (active, waiting, …) in a queue at the end: what a stuck job was. */
export interface OpenJobRecord {
  queue: string;
  id: string;
  state: string;
  /** The tool of a tool job, else the job's name. */
  name: string;
  sessionId?: string;
  toolCallId?: string;
  attemptsStarted: number;
  /** How long before the snapshot its current attempt started, ms. */
  startedAgoMs?: number;
  /** The lock's token (naming its holder's life) and time left, for an active job. */
  lock?: { token: string; ttlMs: number };
}

/** One key under the soak's prefix. */
export interface KeyRecord {
  key: string;
  type: string;
  /** Time to live in ms; -1 when the key has none. */
  ttlMs: number;
  /** The first members of an approval index, cluster-wide or a tree's (what a leftover entry names). */
  members?: string[];
  /** For `approvalsPending`: how old each of `members` is (ms since its call asked), when read. */
  memberAgesMs?: number[];
}

/** What Redis holds at the end of a soak, read once the load drained. */
export interface SoakSnapshot {
  /** Epoch ms. */
  takenAt: number;
  prefix: string;
  requests: RequestJobRecord[];
  /** Job counts by state of each queue (coordinator, decisions, tool queues), by queue name. */
  queueCounts: Record<string, Record<string, number>>;
  /** Every job of any queue left open, with what tells why. */
  openJobs: OpenJobRecord[];
  transcripts: Map<string, AgentMessage[]>;
  /** Each session's child runs (its `children` hash), for the sessions that have any. */
  children: Map<string, ChildRun[]>;
  keys: KeyRecord[];
  /** Session leases still set: the session, the holder's token, its time left. */
  leases: Array<{ sessionId: string; token: string; ttlMs: number }>;
}

const JOB_STATES = [
  "completed",
  "failed",
  "active",
  "waiting",
  "delayed",
  "prioritized",
  "paused",
  "waiting-children",
] as const;

/** Every key matching `pattern` (SCAN on each master of a cluster). */
async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, batch] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== "0");
  }
  return keys;
}

async function readKeys(redis: RedisClient, prefix: string): Promise<KeyRecord[]> {
  const names = await scanKeys(redis, `${prefix}:*`);
  return Promise.all(
    names.map(async (key) => {
      const record: KeyRecord = { key, type: await redis.type(key), ttlMs: await redis.pttl(key) };
      if (/:(approvalDeadlines|treeApprovals)$/.test(key))
        record.members = await redis.zrange(key, 0, 9);
      if (/:approvalsPending$/.test(key)) {
        const pairs = await redis.zrange(key, 0, 9, "WITHSCORES");
        record.members = pairs.filter((_, i) => i % 2 === 0);
        record.memberAgesMs = pairs.filter((_, i) => i % 2 === 1).map((at) => Date.now() - +at);
      }
      return record;
    }),
  );
}

function textOfInput(input: unknown): string {
  if (typeof input === "string") return input;
  const content = (input as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => String((part as { text?: unknown }).text ?? "")).join("");
}

async function readRequests(queue: Queue, store: SessionStore): Promise<RequestJobRecord[]> {
  const records: RequestJobRecord[] = [];
  for (const state of JOB_STATES) {
    for (const job of await queue.getJobs([state], 0, -1)) {
      if (!job?.id) continue;
      const data = (job.data ?? {}) as {
        sessionId?: string;
        input?: unknown;
        followUp?: boolean;
        parent?: { sessionId?: unknown; callKey?: unknown };
      };
      const sessionId = String(
        data.sessionId ?? (job.returnvalue as CoordinatorJobResult | undefined)?.sessionId ?? "",
      );
      records.push({
        id: job.id,
        state,
        sessionId,
        input: textOfInput(data.input),
        followUp: data.followUp === true,
        ...(data.parent
          ? {
              parent: {
                sessionId: String(data.parent.sessionId),
                callKey: String(data.parent.callKey),
              },
            }
          : {}),
        result: (job.returnvalue ?? undefined) as CoordinatorJobResult | undefined,
        failedReason: job.failedReason || undefined,
        storedResponse: sessionId ? await store.readResponse(sessionId, job.id) : undefined,
      });
    }
  }
  return records;
}

/** The child runs of each of `sessionIds` that has any (its `children` hash). */
async function readChildRuns(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionIds: Iterable<string>,
): Promise<Map<string, ChildRun[]>> {
  const children = new Map<string, ChildRun[]>();
  for (const sessionId of sessionIds) {
    const entries = await redis.hvals(keys.children(sessionId));
    if (entries.length > 0)
      children.set(
        sessionId,
        entries.map((text) => JSON.parse(text) as ChildRun),
      );
  }
  return children;
}

async function readQueueCounts(
  redis: RedisClient,
  keys: ClusterKeys,
): Promise<Record<string, Record<string, number>>> {
  const names = [keys.coordinatorQueue, keys.decisionsQueue, ...keys.toolQueues(undefined)];
  const counts: Record<string, Record<string, number>> = {};
  for (const name of names) {
    const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
    counts[name] = await queue.getJobCounts(...JOB_STATES);
    await queue.close();
  }
  return counts;
}

const OPEN_JOB_STATES = ["active", "waiting", "delayed", "prioritized", "paused"] as const;

/** Every job left open in the queues, with its lock when active. */
async function readOpenJobs(redis: RedisClient, keys: ClusterKeys): Promise<OpenJobRecord[]> {
  const names = [keys.coordinatorQueue, keys.decisionsQueue, ...keys.toolQueues(undefined)];
  const open: OpenJobRecord[] = [];
  for (const name of names) {
    const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
    for (const state of OPEN_JOB_STATES) {
      for (const job of await queue.getJobs([state], 0, 20)) {
        const data = (job.data ?? {}) as {
          toolName?: string;
          sessionId?: string;
          toolCallId?: string;
        };
        const lockKey = `${queue.toKey(job.id ?? "")}:lock`;
        const token = state === "active" ? await redis.get(lockKey) : null;
        open.push({
          queue: name,
          id: job.id ?? "",
          state,
          name: data.toolName ?? job.name,
          sessionId: data.sessionId,
          toolCallId: data.toolCallId,
          attemptsStarted: job.attemptsStarted,
          startedAgoMs: job.processedOn ? Date.now() - job.processedOn : undefined,
          lock: token === null ? undefined : { token, ttlMs: await redis.pttl(lockKey) },
        });
      }
    }
    await queue.close();
  }
  return open;
}

/**
 * Reads what the checker needs from Redis: every coordinator-queue job with its stored
 * response, the job counts of every queue, each session's transcript (through
 * `SessionStore`, as coordinators read it) and child runs, every key under the prefix with its type and
 * TTL, and the leases still set.
 */
export async function readSnapshot(target: RedisTarget, prefix: string): Promise<SoakSnapshot> {
  const redis = connectRedis(target, { maxRetriesPerRequest: 20 });
  try {
    const keys = clusterKeys(prefix, keyLayoutOf(target));
    const store = new SessionStore(redis, keys);
    const requestQueue = new Queue(keys.coordinatorQueue, {
      connection: redis,
      prefix: keys.bullPrefix,
    });
    const requests = await readRequests(requestQueue, store);
    await requestQueue.close();
    const transcripts = new Map<string, AgentMessage[]>();
    for (const sessionId of new Set(requests.map((r) => r.sessionId).filter(Boolean)))
      transcripts.set(sessionId, await store.loadMessages(sessionId));
    const keyRecords = await readKeys(redis, prefix);
    const leases = await Promise.all(
      keyRecords
        .filter((k) => k.key.endsWith(":lease"))
        .map(async (k) => ({
          sessionId: /\{(.*)\}/.exec(k.key)?.[1] ?? "",
          token: (await redis.get(k.key)) ?? "",
          ttlMs: k.ttlMs,
        })),
    );
    return {
      takenAt: Date.now(),
      prefix,
      requests,
      queueCounts: await readQueueCounts(redis, keys),
      openJobs: await readOpenJobs(redis, keys),
      transcripts,
      children: await readChildRuns(redis, keys, transcripts.keys()),
      keys: keyRecords,
      leases,
    };
  } finally {
    redis.disconnect();
  }
}
