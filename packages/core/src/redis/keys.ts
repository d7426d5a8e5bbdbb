import { CLUSTER_SLOTS, keySlot } from "./keySlot.js";
import { isClusterTarget, type RedisTarget } from "./redisConnection.js";

/**
 * Every Redis key, BullMQ queue name and pub/sub channel Yiem uses: the one place they are
 * built. No key is built anywhere else, Lua included (scripts get theirs in `KEYS`).
 *
 * Cluster rules, kept in both modes so one layout serves a single Redis and a Redis Cluster:
 * - a session's keys share the hash tag `{<sessionId>}`, so each session script touches one
 *   slot, and sessions spread over the masters;
 * - the worker registry shares `{workers}`, written tools share `{writtenTools}`;
 * - on a cluster, each BullMQ queue name is a hash tag itself (`{coordinator}`), so each
 *   queue's keys share a slot, as BullMQ requires, and different queues may live on
 *   different masters.
 */

/** How the keys are laid out: on a Redis Cluster or not, and over how many tool queue shards. */
export interface KeyLayout {
  /** True on a Redis Cluster: queue names become hash tags. */
  cluster: boolean;
  /** Shards of each (unlimited) tool queue, chosen by session. */
  shards: number;
}

/** A single Redis with one shard: the layout unless told otherwise. */
export const SINGLE_REDIS_LAYOUT: KeyLayout = { cluster: false, shards: 1 };

/** Tool queue shards on a Redis Cluster unless `YIEM_SHARDS` says otherwise. */
export const DEFAULT_CLUSTER_SHARDS = 3;

/**
 * The layout for a connection target: a cluster when it names cluster nodes; `shards`
 * defaults to 1 on a single Redis and `DEFAULT_CLUSTER_SHARDS` on a cluster.
 *
 * @example keyLayoutOf({ clusterNodes: ["redis://127.0.0.1:7000"] }) // { cluster: true, shards: 3 }
 */
export function keyLayoutOf(target: RedisTarget, shards?: number): KeyLayout {
  const cluster = isClusterTarget(target);
  return { cluster, shards: shards ?? (cluster ? DEFAULT_CLUSTER_SHARDS : 1) };
}

/** The BullMQ queue that coordinators consume, by its name on a single Redis. */
export const COORDINATOR_QUEUE = "coordinator";

/**
 * The BullMQ queue of approval decisions, by its name on a single Redis: coordinators consume
 * it; only the approver role may add to it (`docs/SECURITY.md`).
 */
export const DECISIONS_QUEUE = "decisions";

/**
 * The BullMQ queue name of a tool queue (`tool.queue`, default `default`), by its name on a
 * single Redis with one shard. Use `clusterKeys(...).toolQueues` for the names in a layout.
 */
export function toolQueueName(queue: string | undefined): string {
  return `tools-${queue ?? "default"}`;
}

/**
 * The shard (0…shards-1) a session's tool calls go to: FNV-1a of the session id, so every
 * process picks the same one. All calls of one session share a shard, keeping a batch on one
 * queue (and one master).
 */
export function shardOf(sessionId: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The name a queue has in `layout`: itself on a single Redis, a hash tag on a cluster. */
function queueNameIn(layout: KeyLayout, name: string): string {
  return layout.cluster ? `{${name}}` : name;
}

/**
 * The hash tag of shard `index` of `shards` on a cluster: `<base>-<index>`, with a `.<n>`
 * suffix when needed, so that its slot falls in the `index`-th of `shards` equal parts of the
 * slot space. On a cluster whose masters split the slots evenly (as `redis-cli --cluster
 * create` does) the shards therefore land on different masters, where plain names may
 * happen to share one.
 *
 * @example spreadShardTag("tools-default", 1, 3) // "tools-default-1.2" (slot 7049, in 5461–10922)
 */
export function spreadShardTag(base: string, index: number, shards: number): string {
  const from = Math.floor((index * CLUSTER_SLOTS) / shards);
  const to = Math.floor(((index + 1) * CLUSTER_SLOTS) / shards);
  for (let n = 0; ; n++) {
    const tag = n === 0 ? `${base}-${index}` : `${base}-${index}.${n}`;
    const slot = keySlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}

/** The queue names of one tool queue, one per shard (a limited tool's own queue has one). */
function toolQueuesIn(layout: KeyLayout, queue: string | undefined): string[] {
  const base = toolQueueName(queue);
  const shards = queue?.startsWith("tool.") ? 1 : layout.shards;
  if (shards <= 1) return [queueNameIn(layout, base)];
  return Array.from({ length: shards }, (_, i) =>
    layout.cluster ? `{${spreadShardTag(base, i, shards)}}` : `${base}-${i}`,
  );
}

/**
 * Every key, queue and channel under `prefix` in `layout`.
 *
 * @example
 * const keys = clusterKeys("yiem");
 * keys.messages("s-1")          // "yiem:s:{s-1}:messages"
 * keys.coordinatorQueue         // "coordinator" ("{coordinator}" on a cluster)
 * keys.decisionsQueue           // "decisions" ("{decisions}" on a cluster)
 * keys.toolQueueFor(undefined, "s-1") // "tools-default"
 */
export function clusterKeys(prefix: string, layout: KeyLayout = SINGLE_REDIS_LAYOUT) {
  const session = (sessionId: string) => `${prefix}:s:{${sessionId}}`;
  const workersTag = `${prefix}:{workers}`;
  // A gateway key's own keys share its hash tag: its counters and sets touch one slot.
  const gatewayKey = (keyName: string) => `${prefix}:gateway:{key:${keyName}}`;
  // Every remote call looks its queue up: the names (a CRC search on a cluster) are made once.
  const shardNames = new Map<string | undefined, string[]>();
  const toolQueues = (queue: string | undefined): string[] => {
    const known = shardNames.get(queue);
    if (known) return known;
    const names = toolQueuesIn(layout, queue);
    shardNames.set(queue, names);
    return names;
  };
  return {
    prefix,
    layout,
    /** BullMQ's own key prefix for the queues. */
    bullPrefix: `${prefix}:bull`,
    /** The coordinator queue's name in this layout. */
    coordinatorQueue: queueNameIn(layout, COORDINATOR_QUEUE),
    /** The decisions queue's name in this layout ("{decisions}" on a cluster). */
    decisionsQueue: queueNameIn(layout, DECISIONS_QUEUE),
    /** Every shard of tool queue `queue` (what a worker serves). */
    toolQueues,
    /** The shard of tool queue `queue` that a session's calls go to. */
    toolQueueFor: (queue: string | undefined, sessionId: string) => {
      const shards = toolQueues(queue);
      return shards[shardOf(sessionId, shards.length)] as string;
    },
    messages: (sessionId: string) => `${session(sessionId)}:messages`,
    /** Inputs not yet answered: input id → the user message JSON the coordinator encoded. */
    inputs: (sessionId: string) => `${session(sessionId)}:inputs`,
    /**
     * Every input id recorded in the session → a digest of its input (kept 30 days past the
     * last one): an id is the key of one request, so a reused id with another input is refused.
     */
    inputDigests: (sessionId: string) => `${session(sessionId)}:inputDigests`,
    /**
     * The own budgets of inputs not yet answered: input id → the request's `budget` JSON (only
     * for requests that carry one). Forgotten with the input when its run closes.
     */
    inputBudgets: (sessionId: string) => `${session(sessionId)}:inputBudgets`,
    /**
     * The ledger of a tree of agents (a hash, in its root session's slot): the limits of the
     * root run `runId`'s budget, what every node of the tree reserved (model calls) and reported
     * (tokens, tool calls, cost), and each node's last report (`<session>:<run>:<field>`).
     */
    treeLedger: (rootSessionId: string, runId: string) =>
      `${session(rootSessionId)}:ledger:${runId}`,
    /** Plain inputs waiting to join a run (a sorted set of ids, by submission order). */
    pendingInputs: (sessionId: string) => `${session(sessionId)}:pendingInputs`,
    /** Follow-ups waiting for a run of their own (a sorted set of ids, by submission order). */
    pendingFollowUps: (sessionId: string) => `${session(sessionId)}:pendingFollowUps`,
    /**
     * Requests sent but not recorded yet (a sorted set of ids by creation order, as
     * `inputOrder` makes it): `YiemClient.send` adds each before it adds its job, recording
     * the input removes it. A newer input does not open a run while an older one is on its
     * way (fetched by a slower coordinator), for `SUBMITTED_WAIT_MS` at most
     * (`startRun-9.lua`).
     */
    submitted: (sessionId: string) => `${session(sessionId)}:submitted`,
    /** The open run (`runId`); absent when the session is idle. */
    run: (sessionId: string) => `${session(sessionId)}:run`,
    /** Ids of the inputs the open run answers, in the order they joined it. */
    runInputs: (sessionId: string) => `${session(sessionId)}:runInputs`,
    /**
     * A client's abort of the open run: the run's id, until a coordinator takes it into the
     * run (`aborted`). The one session key the client role may write.
     */
    abortRequested: (sessionId: string) => `${session(sessionId)}:abortRequested`,
    /**
     * STRING: the session's tree was aborted before its run opened (a child run no
     * coordinator had taken in): its next run opens aborted, taking the mark
     * (`abortChildRun-3.lua`, `startRun-9.lua`).
     */
    abortOnStart: (sessionId: string) => `${session(sessionId)}:abortOnStart`,
    /** Tool calls running in a coordinator's process right now (call id → start time). */
    running: (sessionId: string) => `${session(sessionId)}:running`,
    lease: (sessionId: string) => `${session(sessionId)}:lease`,
    /**
     * STRING: the session exists (kept 30 days past its last input): written by
     * `YiemClient.send` before it adds a request, and by every input a coordinator records
     * (`enqueueInput-8.lua`), so `hasSession` is one `EXISTS`, not a look through the queue.
     */
    sessionKnown: (sessionId: string) => `${session(sessionId)}:known`,
    /**
     * STRING: the session's usage summary (`RunUsage` JSON of its whole transcript), stored
     * by `finishRun.lua` as each run closes; what a list of sessions reads instead of the
     * transcripts.
     */
    sessionUsage: (sessionId: string) => `${session(sessionId)}:usage`,
    /** STRING: the name of the agent the session belongs to (set by its first request). */
    sessionAgent: (sessionId: string) => `${session(sessionId)}:agent`,
    /**
     * HASH: coordinator id → JSON of the agents it serves and their digest, with when it last
     * said so (`state/agentAnnouncements.ts`).
     */
    agentAnnouncements: `${prefix}:{agents}:coordinators`,
    /**
     * STRING: a child run's session → the parent call it answers (`ParentCall` JSON: parent
     * session, call key, root session, depth), set by its job's first intake.
     */
    sessionParent: (sessionId: string) => `${session(sessionId)}:parent`,
    /** HASH: the session's child runs, call key → `ChildRun` JSON (agent, session, status, usage). */
    children: (sessionId: string) => `${session(sessionId)}:children`,
    /** Calls of the parked batch that need a human decision: call key → request JSON. */
    approvals: (sessionId: string) => `${session(sessionId)}:approvals`,
    /** Decisions taken on them: call key → decision JSON (approved, by, reason, decidedAt). */
    decisions: (sessionId: string) => `${session(sessionId)}:decisions`,
    /** Outcomes of the parked batch's other calls, reused on resume: call key → outcome JSON. */
    parkedResults: (sessionId: string) => `${session(sessionId)}:parkedResults`,
    /**
     * Every call awaiting approval in the cluster: `<sessionId> <callKey>` by request time.
     * An index written beside the session's scripts (never inside them: it is another slot).
     */
    approvalsPending: `${prefix}:approvalsPending`,
    /**
     * ZSET, kept on a tree's root session: the calls awaiting approval in the tree (the root's
     * and its child runs'), `<sessionId> <callKey>` by request time, so listing the approvals
     * of some roots costs what it returns. Written beside the session scripts as
     * `approvalsPending` is (a child's calls live in another slot than its root).
     */
    treeApprovals: (rootSessionId: string) => `${session(rootSessionId)}:treeApprovals`,
    /** Calls awaiting approval that have a timeout: `<sessionId> <callKey>` by deadline. */
    approvalDeadlines: `${prefix}:approvalDeadlines`,
    stream: (sessionId: string) => `${session(sessionId)}:events`,
    /** The stored response to input `inputId` of the session (kept a while after the run). */
    response: (sessionId: string, inputId: string) => `${session(sessionId)}:response:${inputId}`,
    eventChannel: (sessionId: string) => `${prefix}:events:${sessionId}`,
    responsesChannel: `${prefix}:responses`,
    controlChannel: `${prefix}:control`,
    /**
     * Where tool workers announce how each job of BullMQ queue `queueName` ended
     * (`protocol/toolJobEnds.ts`); the coordinators waiting for its jobs listen here.
     */
    toolEndsChannel: (queueName: string) => `${prefix}:toolEnds:${queueName}`,
    /** The live workers: worker id → last heartbeat (a sorted set). */
    workers: `${workersTag}:workers`,
    /** One worker's heartbeat record (expires when the worker stops beating). */
    worker: (workerId: string) => `${workersTag}:worker:${workerId}`,
    /**
     * ZSET: every running coordinator and worker, by the id of its life (`lifeId`, a UUID per
     * start) → until when it counts as alive (Redis' clock, ms), renewed by its heartbeat
     * thread (`ops/aliveBeat.ts`). Every lock token and lease token a process takes names its
     * life (`holderToken`), so a coordinator can tell a dead holder (`coordinator/failureDetector.ts`).
     */
    alive: `${workersTag}:alive`,
    /** ZSET: the lives found dead (their heartbeat ran out) → when; kept ten minutes. */
    dead: `${workersTag}:dead`,
    /**
     * SET: the lives whose process holds a sharded subscription to their
     * `lifeChannel`: Redis drops it the moment the process's sockets close, so a coordinator
     * can tell such a life dead once its beats are late, without waiting for its ttl.
     */
    watched: `${workersTag}:watched`,
    /**
     * The sharded pub/sub channel a life's process subscribes to (nothing is ever
     * published on it): its subscriber count says whether the process is still connected.
     * Shares the `{workers}` slot, so the failure detector's script reads it on a cluster too.
     */
    lifeChannel: (lifeId: string) => `${workersTag}:life:${lifeId}`,
    /**
     * A tool definition workers announce, content-addressed by its digest (`digestOfJson`):
     * written by the workers that have it, refreshed with their heartbeats, read once per
     * digest by each coordinator.
     */
    toolDefinition: (digest: string) => `${workersTag}:toolDefinition:${digest}`,
    /**
     * BullMQ's hash of coordinator-queue job `jobId` (BullMQ's layout: `<bullPrefix>:<queue>:<id>`).
     * Coordinators add one field to it: the session of a job that names none
     * (`state/requestSessions.ts`).
     */
    requestJob: (jobId: string) =>
      `${prefix}:bull:${queueNameIn(layout, COORDINATOR_QUEUE)}:${jobId}`,
    /**
     * Set by a tool worker when job `jobId` of tool queue `queue` finishes; a retry of the job
     * is then refused. In the queue's hash slot on a Redis Cluster (its name is its hash tag),
     * so the script that completes the job writes it in the same step.
     */
    toolDone: (queue: string, jobId: string) => `${prefix}:toolDone:${queue}:${jobId}`,
    /**
     * The keys of shared provider limit `name` (`features/flowControl`), in one hash tag:
     * `calls` (ZSET admitted call id → when it was sent, ms), `tokens` (HASH admitted call id →
     * tokens reserved), `pausedUntil` (STRING, ms: a 429 pauses every coordinator's calls until
     * then), and the fair queue of the calls waiting: `waiting`, `wants`, `clock`.
     */
    /**
     * HASH: the shared provider limits coordinators apply, by name → the limit as JSON
     * (`ResolvedModelLimit`), written by each coordinator at its start; what
     * `readProviderLimits` lists.
     */
    modelLimits: `${prefix}:modelLimits`,
    modelLimit: (name: string) => {
      const tag = `${prefix}:{modelLimit:${name}}`;
      return {
        calls: `${tag}:calls`,
        tokens: `${tag}:tokens`,
        pausedUntil: `${tag}:pausedUntil`,
        /** ZSET: the calls waiting for their turn → their tenant's fair-share tag. */
        waiting: `${tag}:waiting`,
        /** HASH: a waiting call's id → the tokens it asks for. */
        wants: `${tag}:wants`,
        /** HASH: `v` → the virtual time served, `t:<tenant>` → a tenant's last tag. */
        clock: `${tag}:clock`,
      };
    },
    /** STRING: the tenant session `sessionId`'s runs are made for (`CoordinatorJobData.tenant`). */
    sessionTenant: (sessionId: string) => `${session(sessionId)}:tenant`,
    /**
     * HASH: tenant `tenant`'s ledger of day `day` (`YYYY-MM-DD`, UTC) for its budget per day
     * (`YIEM_TENANTS`), in its own hash tag.
     */
    tenantDay: (tenant: string, day: string) => `${prefix}:{tenant:${tenant}}:day:${day}`,
    /**
     * STRING: how many of tenant `tenant`'s requests wait in the coordinator queue, as clients
     * with `tenantLine` counted them (the next one's BullMQ priority), in its own hash tag.
     */
    tenantQueued: (tenant: string) => `${prefix}:{tenant:${tenant}}:queued`,
    /**
     * ZSET: the sessions whose root runs of tenant `tenant` run now (or are about to, their
     * request taken in) → when their place expires (epoch ms), for its `runsAtOnce`
     * (`YIEM_TENANTS`), in its own hash tag.
     */
    tenantRunning: (tenant: string) => `${prefix}:{tenant:${tenant}}:running`,
    /** STRING: the name of the gateway key that started the session (`apps/gateway`), if one did. */
    sessionOwner: (sessionId: string) => `${session(sessionId)}:owner`,
    /** ZSET: every session started through a gateway, by last activity (epoch ms). */
    gatewaySessions: `${prefix}:gateway:sessions`,
    /** ZSET: the sessions gateway key `keyName` started, by last activity (epoch ms). */
    ownedSessions: (keyName: string) => `${gatewayKey(keyName)}:sessions`,
    /** STRING: JSON `{ sessionId, owner }` of a run submitted through a gateway (kept a day). */
    gatewayRun: (runId: string) => `${prefix}:gateway:run:${runId}`,
    /** STRING: JSON `{ digest, runId, sessionId }` of an `Idempotency-Key` of gateway key `keyName` (kept a day). */
    idempotency: (keyName: string, idempotencyKey: string) =>
      `${gatewayKey(keyName)}:idempotency:${idempotencyKey}`,
    /** STRING counter: requests of gateway key `keyName` in minute `window` (epoch minutes). */
    requestCount: (keyName: string, window: number) => `${gatewayKey(keyName)}:requests:${window}`,
    /**
     * STRING: JSON `{ keyName, sessionId }` of an event-stream token (what `EventSource`, which
     * sends no headers, passes as `?token=`), by the token's hash; kept an hour from its last use.
     */
    streamToken: (tokenHash: string) => `${prefix}:gateway:streamToken:${tokenHash}`,
    /** ZSET: the runs of gateway key `keyName` not seen finished yet, by submit time (epoch ms). */
    openRuns: (keyName: string) => `${gatewayKey(keyName)}:runs`,
    /**
     * STRING: JSON `{ sessionId, runId }` of an MCP `tools/call` of gateway key `keyName` while
     * it runs, or `cancelled` once the client cancelled it (`notifications/cancelled`), by the
     * MCP client's id and the request's JSON-RPC id (`callId`: `<client> <requestId>`).
     */
    mcpCall: (keyName: string, callId: string) => `${gatewayKey(keyName)}:mcpCall:${callId}`,
    /**
     * ZSET: the MCP tasks (their run ids) gateway key `keyName` made with a task-augmented
     * `tools/call`, by creation time (epoch ms); those older than a day leave it (`tasks/list`).
     */
    mcpTasks: (keyName: string) => `${gatewayKey(keyName)}:mcpTasks`,
    /**
     * HASH: the A2A push notification configs of task (run) `taskId`: config id → JSON `{ id,
     * url, token?, authentication?, owner }` (kept a day, as the run's record).
     */
    a2aPushConfigs: (taskId: string) => `${prefix}:gateway:a2aPush:{${taskId}}:configs`,
    /** HASH: config id → what was last delivered to it for task `taskId` (its state's mark). */
    a2aPushSent: (taskId: string) => `${prefix}:gateway:a2aPush:{${taskId}}:sent`,
    /** STRING: the gateway delivering task `taskId`'s push notifications now (a lease, ms TTL). */
    a2aPushLease: (taskId: string) => `${prefix}:gateway:a2aPush:{${taskId}}:lease`,
    /** ZSET: the tasks with push configs to deliver, by when each is next due (epoch ms). */
    a2aPushDue: `${prefix}:gateway:a2aPush:due`,
  };
}

/** The key set of one prefix. */
export type ClusterKeys = ReturnType<typeof clusterKeys>;

/**
 * The Redis keys of written tools under `prefix`. They share the hash tag `{writtenTools}`,
 * so the save script may touch them together on a Redis Cluster too.
 */
export function writtenToolKeys(prefix: string) {
  const base = `${prefix}:{writtenTools}`;
  return {
    /** HASH: name → JSON of the current `WrittenToolDefinition`. */
    tools: base,
    /** LIST: the hash of every version of `name`, oldest first (its length is the version). */
    history: (name: string) => `${base}:history:${name}`,
    /** HASH: hash → canonical JSON of that `WrittenToolSpec` (content-addressed). */
    blobs: `${base}:blobs`,
    /** STRING counter, bumped by every save that changes something. */
    rev: `${base}:rev`,
  };
}
