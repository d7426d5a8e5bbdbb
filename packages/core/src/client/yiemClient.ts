import { randomUUID } from "node:crypto";
import type { Queue } from "bullmq";
import { ApprovalStore, type PendingApproval } from "../features/approvals/approvalStore.js";
import {
  type DecisionJobData,
  type DecisionJobResult,
  readDecisionJob,
} from "../features/approvals/protocol.js";
import { readChildren } from "../features/childRuns/childRunStore.js";
import type { ChildRun } from "../features/childRuns/protocol.js";
import {
  type ProviderLimitState,
  readProviderLimits,
} from "../features/flowControl/providerLimitStore.js";
import { sumRunUsage } from "../loop/runUsage.js";
import type { BusEvent, EncodedBusEvent } from "../protocol/busEvent.js";
import {
  type CoordinatorJobData,
  type RunAnswer,
  readCoordinatorJob,
} from "../protocol/coordinatorJob.js";
import {
  DecisionRefusedError,
  type EventReaderBehindError,
  RedisUnavailableError,
  ResponseTimeoutError,
} from "../protocol/errors.js";
import { JOB_RETENTION } from "../protocol/jobRetention.js";
import { type ClusterKeys, clusterKeys, keyLayoutOf } from "../redis/keys.js";
import { addJobLean } from "../redis/plainJobs.js";
import {
  connectRedis,
  describeRedisTarget,
  duplicateConnection,
  type RedisClient,
} from "../redis/redisConnection.js";
import { DEFAULTS } from "../settings/defaults.js";
import type { RedisConnectionOptions } from "../settings/optionShapes.js";
import { type AgentAnnouncement, readAgentAnnouncements } from "../state/agentAnnouncements.js";
import { ENCODED_EVENTS, type EventForm, PARSED_EVENTS } from "../state/eventForms.js";
import { inputOrder } from "../state/inputOrder.js";
import { RequestSessions } from "../state/requestSessions.js";
import { ResponseWaits } from "../state/responseWaits.js";
import { SessionAgents } from "../state/sessionAgents.js";
import { SessionEventHub } from "../state/sessionEventHub.js";
import { streamSessionEvents } from "../state/sessionEventStream.js";
import { SESSION_TTL_SECONDS, SessionStore, SUBMITTED_TTL_SECONDS } from "../state/sessionStore.js";
import { listWorkers, type WorkerInfo } from "../state/workerRegistry.js";
import type { AssistantMessage, RunBudget, RunUsage, UserInput } from "../types/index.js";
import { ClientQueues } from "./clientQueues.js";

/** How many calls of a limited tool wait and run across the cluster (`limitedToolLoad`). */
export interface LimitedToolLoad {
  tool: string;
  /** Its tool queue, e.g. `tool.search`. */
  queue: string;
  waiting: number;
  running: number;
}

/** BullMQ's largest job priority (2^21 - 1). */
const MAX_JOB_PRIORITY = 2_097_151;

/**
 * How long a tenant's count of waiting requests is kept after its last request: a count a
 * crashed coordinator left too high (or a client that died between counting and adding its
 * job) is forgotten once the tenant has been quiet this long.
 */
const TENANT_LINE_TTL_S = 3600;

/** Options of `YiemClient`. */
export interface YiemClientOptions extends RedisConnectionOptions {
  /**
   * Largest input `send` accepts, in bytes of its JSON (as the coordinators).
   * @defaultValue `DEFAULTS.maxInputBytes`
   */
  maxInputBytes?: number;
  /**
   * Lines up the requests that name a tenant fairly in the coordinator queue: each gets a
   * BullMQ priority, how many of its tenant's requests wait before it (counted in Redis), so
   * coordinators take waiting tenants in turn and one tenant's burst of thousands of runs does
   * not hold back another's one. Requests without a tenant keep going first, in order. Off by
   * default: prioritized jobs are not in the queue's `wait` list, which a KEDA `redis` list
   * scaler reads (scale on the coordinators' queue depth gauge instead).
   * @defaultValue false
   */
  tenantLine?: boolean;
}

/** Options of `send`. */
export interface SendOptions {
  /**
   * The agent that answers; absent: the session's current agent (`default` for a new session).
   * A session belongs to the agent that started it, or the last one it was handed off to.
   */
  agent?: string;
  /** The session to send to; a new one when absent. */
  sessionId?: string;
  /** A follow-up: its own run after the current one, instead of joining it. */
  followUp?: boolean;
  /**
   * This request's own budget: it lowers, never raises, the agent's (and the coordinator's
   * `YIEM_BUDGET`) for the run that answers it.
   */
  budget?: RunBudget;
  /**
   * The tenant the session's runs are made for: provider limits serve tenants fairly, and a
   * tenant's budget per day applies (`YIEM_TENANTS`). Absent: the session's tenant, if any.
   */
  tenant?: string;
  /**
   * The request's id (its coordinator-queue job's id) instead of a random one. Sending again
   * with the same `requestId`, session and input adds nothing (BullMQ keeps one job per id,
   * and coordinators record each input id once): what makes a retried request idempotent.
   */
  requestId?: string;
  /** The same as `requestId`, under its older name (an alias kept); `requestId` wins. */
  runId?: string;
}

/**
 * What `send` sent: the session, and the request's id, which `waitForResponse`, `runStatus`,
 * `requestRefusal` and `events`' `requestId` take and `agentEnd`'s `inputIds` list. `runId` is
 * the same id under its older name (an alias kept so that no caller breaks).
 */
export interface SentRequest {
  sessionId: string;
  requestId: string;
  /** The same id as `requestId` (its older name). */
  runId: string;
}

/**
 * Where a run stands (`runStatus`): its request waits for a coordinator, runs, is parked for
 * approval, was answered (`answer`), or was refused or failed (`error`, the reason); `unknown`
 * when neither its job nor its answer is found (never sent, or forgotten).
 */
export type RunStatus =
  | { status: "waiting" }
  | { status: "running" }
  | { status: "parked" }
  | { status: "completed"; answer: RunAnswer }
  | { status: "failed"; error: string }
  | { status: "unknown" };

/** Options of `events`. */
export interface EventsOptions {
  /** Replay the session's stored events first. */
  fromStart?: boolean;
  /**
   * Replay the stored events after this sequence number first (resuming after the last `seq`
   * a reader saw: no gap, no duplicate); wins over `fromStart`.
   */
  afterSeq?: number;
  /**
   * End after an `agentEnd` (of the run answering `requestId`, or that run's own `runId`,
   * when given).
   */
  untilAgentEnd?: boolean;
  /** With `untilAgentEnd`: the request (an id from `send`) whose answer ends the stream. */
  requestId?: string;
  /** The same as `requestId`, under its older name (an alias kept); `requestId` wins. */
  runId?: string;
  signal?: AbortSignal;
  /**
   * Most events given to the reader and not yet taken (default 1,000); past it, or past
   * `maxQueuedBytes`, a live event ends the stream with `EventReaderBehindError` (read on
   * after its `afterSeq`: nothing is lost).
   */
  maxQueuedEvents?: number;
  /** Most bytes of event JSON given to the reader and not yet taken (default 8 MiB). */
  maxQueuedBytes?: number;
  /** Told the moment the reader falls behind, before the stream throws it. */
  onBehind?: (error: EventReaderBehindError) => void;
  /**
   * Told once the stream is live (it starts at its first `next`): subscribed, Redis having
   * acknowledged it, and the number it starts after known, so every event published from then
   * on reaches it and waits for the reader. Send what makes the events (`send`) after it to
   * miss none of them, the streamed text of the first model call included.
   */
  onLive?: () => void;
}

/** Options of `approve` and `deny`. */
export interface DecisionOptions {
  /** Who decides (free text, kept in the transcript). */
  by?: string;
  /** Why (for a denial, the text the model reads). */
  reason?: string;
  /**
   * How long to wait for a coordinator to record it.
   * @defaultValue `DEFAULTS.decisionTimeoutMs`
   */
  timeoutMs?: number;
}

/**
 * What `abort` did: recorded an abort of the session's open run (`runId`), or found no run
 * open and did nothing.
 */
export type AbortOutcome = { kind: "recorded"; runId: string } | { kind: "noOpenRun" };

/** How often `waitForResponse` reads a response it was not told of, in case the announcement was missed. */
const RESPONSE_RECHECK_MS = 1000;

/** How many runs' sessions a client remembers for `waitForResponse`. */
const REMEMBERED_RUNS = 10_000;

function pick(options: DecisionOptions): { by?: string; reason?: string } {
  return {
    ...(options.by ? { by: options.by } : {}),
    ...(options.reason ? { reason: options.reason } : {}),
  };
}

/**
 * Talks to a Yiem cluster: sends input to sessions, watches their events, waits for
 * responses, aborts runs and lists workers. Fails fast with `RedisUnavailableError` when
 * Redis cannot be reached.
 *
 * @example
 * const client = new YiemClient({ redis: "redis://127.0.0.1:6379" });
 * const { sessionId, requestId } = await client.send("What time is it in Tokyo?");
 * for await (const event of client.events(sessionId, { untilAgentEnd: true, requestId })) console.log(event.type);
 * const answer = await client.waitForResponse(requestId);
 */
export class YiemClient {
  private readonly keys: ClusterKeys;
  private readonly command: RedisClient;
  private readonly store: SessionStore;
  /** The BullMQ queues opened so far (the coordinator queue, the decisions queue), by name. */
  private readonly queues: ClientQueues;
  private readonly responses: ResponseWaits;
  /** The subscription `responses` listens on, opened on the first `waitForResponse`. */
  private responsesListening: { subscriber: RedisClient; ready: Promise<void> } | undefined;
  /** The wait for the connection that calls share while it is not ready (`ready`). */
  private readyWait: Promise<void> | undefined;
  /** The subscriber every event stream of this client shares, opened by the first `events`. */
  private eventHub: SessionEventHub | undefined;
  private readonly target: string;
  private readonly maxInputBytes: number | undefined;
  private readonly tenantLine: boolean;
  /**
   * The session of each request this client sent (or was told of) and has not seen answered
   * yet; the oldest are forgotten past `REMEMBERED_RUNS` (a forgotten one is read from its job).
   */
  private readonly sessionsOfRequests = new Map<string, string>();

  constructor(options: YiemClientOptions) {
    this.maxInputBytes = options.maxInputBytes;
    this.tenantLine = options.tenantLine ?? false;
    this.keys = clusterKeys(
      options.prefix ?? DEFAULTS.prefix,
      keyLayoutOf(options.redis, options.shards),
    );
    this.target = describeRedisTarget(options.redis);
    this.command = connectRedis(options.redis, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 3000,
    });
    this.command.on("error", () => undefined); // surfaced per call as RedisUnavailableError
    this.store = new SessionStore(this.command, this.keys);
    this.queues = new ClientQueues(this.command, this.keys.bullPrefix, () => this.ready());
    this.responses = new ResponseWaits({
      read: (inputs) =>
        Promise.all(
          inputs.map(({ requestId }) => this.readAnswerOf(requestId).catch(() => undefined)),
        ),
      recheckMs: RESPONSE_RECHECK_MS,
    });
  }

  /** The BullMQ queue `name`, opened once Redis is ready (see `ClientQueues`). */
  private openQueue(name: string): Promise<Queue> {
    return this.queues.open(name);
  }

  /** The coordinator queue (requests). */
  private coordinatorQueue(): Promise<Queue> {
    return this.openQueue(this.keys.coordinatorQueue);
  }

  /**
   * Sends input to a session (a new one by default): adds one job to the coordinator queue,
   * exactly as any BullMQ client may (`CoordinatorJobData`), with the returned `requestId` as
   * its job id (`runId` is the same id, its older name). Refuses an input the coordinators
   * would refuse (`InvalidCoordinatorJobError`, naming the field) before anything reaches Redis.
   */
  async send(message: UserInput, options: SendOptions = {}): Promise<SentRequest> {
    const sessionId = options.sessionId ?? randomUUID();
    const data: CoordinatorJobData = {
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
      input: message,
      sessionId,
      followUp: options.followUp ?? false,
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    };
    const request = readCoordinatorJob(data, { maxInputBytes: this.maxInputBytes });
    await this.ready();
    const requestId = options.requestId ?? options.runId ?? randomUUID();
    await this.guard(async () => {
      const sentAt = await this.markSent(sessionId, requestId);
      const priority = await this.placeInTenantLine(options.tenant);
      await addJobLean(
        await this.coordinatorQueue(),
        "request",
        { ...data, input: request.message },
        {
          jobId: requestId,
          timestamp: sentAt,
          ...(priority ? { priority } : {}),
          ...JOB_RETENTION,
        },
      );
    });
    this.rememberRequest(requestId, sessionId);
    return { sessionId, requestId, runId: requestId };
  }

  /**
   * Marks a request as sent before its job is added, in one round trip: its session is known
   * (`hasSession` never looks through the queue), and the request is on its way (`submitted`,
   * by its creation order): no input sent after it opens a run before a coordinator recorded
   * it, however much later the coordinator that fetched it gets to it. Resolves with the
   * creation time the job is given, which orders the request in its session.
   */
  private async markSent(sessionId: string, requestId: string): Promise<number> {
    const sentAt = Date.now();
    const submitted = this.keys.submitted(sessionId);
    const replies = await this.command
      .pipeline()
      .set(this.keys.sessionKnown(sessionId), "1", "EX", SESSION_TTL_SECONDS)
      .zadd(submitted, inputOrder(sentAt, 0), requestId)
      .expire(submitted, SUBMITTED_TTL_SECONDS)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed; // a user without the client role's keys: NOPERM, as a plain SET says
    return sentAt;
  }

  /**
   * The priority of a request of `tenant` in the coordinator queue, with `tenantLine`: how many
   * of the tenant's requests wait, this one included (a coordinator that takes a request
   * counts it out: the tenants feature). None without a tenant or the option.
   */
  private async placeInTenantLine(tenant: string | undefined): Promise<number | undefined> {
    if (!this.tenantLine || tenant === undefined) return undefined;
    const key = this.keys.tenantQueued(tenant);
    const replies = await this.command.pipeline().incr(key).expire(key, TENANT_LINE_TTL_S).exec();
    const [err, waiting] = replies?.[0] ?? [null, 1];
    if (err) throw err;
    return Math.min(Math.max(Number(waiting), 1), MAX_JOB_PRIORITY);
  }

  /** Remembers the session of a request, forgetting the oldest past `REMEMBERED_RUNS`. */
  private rememberRequest(requestId: string, sessionId: string): void {
    this.sessionsOfRequests.set(requestId, sessionId);
    if (this.sessionsOfRequests.size <= REMEMBERED_RUNS) return;
    const oldest = this.sessionsOfRequests.keys().next().value;
    if (oldest !== undefined) this.sessionsOfRequests.delete(oldest);
  }

  /**
   * The stored answer of request `requestId`, read in its session: known for requests this
   * client sent, else read from the request job (its `sessionId`, or the one a job without it
   * starts).
   */
  private async readAnswerOf(requestId: string): Promise<RunAnswer | undefined> {
    const sessionId =
      this.sessionsOfRequests.get(requestId) ?? (await this.sessionOfRequest(requestId));
    if (!sessionId) return undefined;
    const answer = await this.store.readAnswer(sessionId, requestId);
    if (answer) this.sessionsOfRequests.delete(requestId);
    return answer;
  }

  /**
   * The session a request job is for, when the job is still in the coordinator queue: its
   * `sessionId`, or the random one a coordinator recorded when it took in a job without one.
   */
  private async sessionOfRequest(requestId: string): Promise<string | undefined> {
    const job = await (await this.coordinatorQueue()).getJob(requestId);
    if (!job) return undefined;
    const named = (job.data as { sessionId?: unknown } | undefined)?.sessionId;
    const sessionId =
      typeof named === "string"
        ? named
        : await new RequestSessions(this.command, this.keys).read(requestId);
    if (sessionId) this.rememberRequest(requestId, sessionId);
    return sessionId;
  }

  /**
   * True when the cluster knows the session: it has a stored transcript or events, a
   * coordinator holds it, or it has its `known` mark, which `send` writes before it adds a
   * request and coordinators write with every input they record. One `EXISTS` of the
   * session's keys, whatever the queue's backlog: a request added by a plain BullMQ client
   * (or by a client older than the mark) makes its session known once a coordinator takes it
   * in. Reads only keys the client role may read (`docs/SECURITY.md`).
   */
  async hasSession(sessionId: string): Promise<boolean> {
    await this.ready();
    return this.guard(async () => {
      const k = this.keys;
      const stored = await this.command.exists(
        k.messages(sessionId),
        k.stream(sessionId),
        k.lease(sessionId),
        k.sessionKnown(sessionId),
      );
      return stored > 0;
    });
  }

  /**
   * The session's events, each once, in order (see `streamSessionEvents`); streamed answer
   * text (`messageUpdate`, `live: true`) comes live only, never in a replay. Every stream of
   * this client shares one subscriber connection (`SessionEventHub`), opened by the first
   * and closed by `close`, which also ends the streams still open. A reader that stops taking
   * events holds at most its queue (`maxQueuedEvents`, `maxQueuedBytes`): the replay is read a
   * page at a time, and a live event past the queue ends the stream with
   * `EventReaderBehindError`.
   */
  events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<BusEvent> {
    const requestId = options.requestId ?? options.runId;
    const until = options.untilAgentEnd
      ? (event: BusEvent) =>
          event.type === "agentEnd" &&
          !event.path && // a child run's end, seen at its root
          (!requestId || event.runId === requestId || (event.inputIds ?? []).includes(requestId))
      : undefined;
    return this.streamEvents(sessionId, PARSED_EVENTS, options, until);
  }

  /**
   * The session's events as `events` gives them (each once, in order, the same queue bounds),
   * each as the UTF-8 bytes of its JSON with its number and type (`EncodedBusEvent`), for a
   * relay that passes events on without reading them (the gateway's server-sent events). A
   * live event is encoded once for every such reader of this client: its readers share one
   * buffer, never a parsed copy. `untilAgentEnd` (and its request) does not apply.
   *
   * @example for await (const event of client.encodedEvents(sessionId, { afterSeq })) socket.write(event.json);
   */
  encodedEvents(
    sessionId: string,
    options: Omit<EventsOptions, "untilAgentEnd" | "requestId" | "runId"> = {},
  ): AsyncGenerator<EncodedBusEvent> {
    return this.streamEvents(sessionId, ENCODED_EVENTS, options);
  }

  /**
   * The session's events in `form`, on this client's shared subscriber. A client made just
   * now is still connecting: its commands fail at once until then (no offline queue), and its
   * subscriber may be subscribed first, so the stream's first read waits for the connection
   * (`npm run demo` died on it once: "Stream isn't writeable"). A connection that drops later
   * is the stream's own concern (it ends or resumes as documented).
   */
  private async *streamEvents<T extends BusEvent | EncodedBusEvent>(
    sessionId: string,
    form: EventForm<T>,
    options: EventsOptions,
    until?: (event: T) => boolean,
  ): AsyncGenerator<T> {
    const status = this.command.status;
    if (status === "wait" || status === "connecting" || status === "connect") await this.ready();
    this.eventHub ??= new SessionEventHub({ command: this.command, keys: this.keys });
    yield* streamSessionEvents({
      command: this.command,
      hub: this.eventHub,
      keys: this.keys,
      sessionId,
      form,
      fromStart: options.fromStart,
      afterSeq: options.afterSeq,
      until,
      signal: options.signal,
      maxQueuedEvents: options.maxQueuedEvents,
      maxQueuedBytes: options.maxQueuedBytes,
      onBehind: options.onBehind,
      onLive: options.onLive,
    });
  }

  /**
   * The response of the run that answered request `requestId` (an id from `send`; its older
   * name, `runId`, is the same id). The response is stored
   * in the run's session: this client knows it for its own sends, finds it in the request job
   * while the job is kept (an hour after it completed), or is told it (`sessionId`). Rejects
   * with `ResponseTimeoutError` after `timeoutMs` (default `DEFAULTS.responseTimeoutMs`).
   */
  async waitForResponse(
    requestId: string,
    options: { timeoutMs?: number; sessionId?: string } = {},
  ): Promise<AssistantMessage> {
    return (await this.waitForAnswer(requestId, options)).response;
  }

  /**
   * The answer of the run that answered request `requestId`, as `waitForResponse` finds it: the response
   * and the run's `usage` (tokens, model and tool calls, `costUsd` with a price table; absent
   * for an answer stored by a version that did not count it).
   *
   * @example const { response, usage } = await client.waitForAnswer(requestId); // usage?.totalTokens
   */
  async waitForAnswer(
    requestId: string,
    options: { timeoutMs?: number; sessionId?: string } = {},
  ): Promise<RunAnswer> {
    if (options.sessionId) this.rememberRequest(requestId, options.sessionId);
    await this.listenForResponses();
    const timeoutMs = options.timeoutMs ?? DEFAULTS.responseTimeoutMs;
    const wait = this.responses.wait(requestId, { timeoutMs });
    void this.responses.recheck([requestId]); // it may be stored already
    return wait.promise;
  }

  /** Subscribes (once) to the responses channel on a connection of its own. */
  private listenForResponses(): Promise<void> {
    if (this.responsesListening) return this.responsesListening.ready;
    const subscriber = duplicateConnection(this.command, {
      lazyConnect: false,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
    });
    subscriber.on("error", () => undefined);
    const ready = this.responses.listen(subscriber, this.keys.responsesChannel);
    this.responsesListening = { subscriber, ready };
    return ready;
  }

  /**
   * Aborts the session's open run, wherever its calls run: records the abort in the session
   * first (kept until a coordinator takes it, so a run no coordinator is alive to hear it, or
   * a parked one, is stopped by whichever coordinator next holds or resumes it), then
   * announces it on the control channel, where the holder stops the run and workers cancel its
   * running calls. A session with no open run is left alone: `{ kind: "noOpenRun" }`, and no
   * later run is aborted.
   */
  async abort(sessionId: string): Promise<AbortOutcome> {
    await this.ready();
    return this.guard(async () => {
      const runId = await this.store.requestAbort(sessionId);
      if (runId === undefined) return { kind: "noOpenRun" };
      const message = JSON.stringify({ type: "abort", sessionId });
      await this.command.publish(this.keys.controlChannel, message);
      return { kind: "recorded", runId };
    });
  }

  /** The live tool workers. */
  async workers(): Promise<WorkerInfo[]> {
    await this.ready();
    return this.guard(() => listWorkers(this.command, this.keys));
  }

  /**
   * Why the coordinators refused request `requestId` (its job failed: `invalid request: agent:
   * unknown agent "x" (known: …)`, say), or `undefined` while it is not refused or is gone.
   */
  async requestRefusal(requestId: string): Promise<string | undefined> {
    await this.ready();
    return this.guard(async () => {
      const job = await (await this.coordinatorQueue()).getJob(requestId);
      if (!job || !(await job.isFailed())) return undefined;
      return job.failedReason;
    });
  }

  /**
   * Where request `requestId` (an id from `send`) stands: its stored answer when there is one,
   * else the state of its job (`parked` while its session's run waits for approval).
   * Pass `sessionId` when known (else it is read from the job, as `waitForAnswer` does).
   */
  async runStatus(requestId: string, options: { sessionId?: string } = {}): Promise<RunStatus> {
    await this.ready();
    return this.guard(async () => {
      const sessionId =
        options.sessionId ??
        this.sessionsOfRequests.get(requestId) ??
        (await this.sessionOfRequest(requestId));
      const answer = sessionId ? await this.store.readAnswer(sessionId, requestId) : undefined;
      if (answer) return { status: "completed", answer };
      const queue = await this.coordinatorQueue();
      const job = await queue.getJob(requestId);
      if (!job) return { status: "unknown" };
      const state = await job.getState();
      if (state === "failed" || state === "completed") {
        // The job was read before `getState`: it may have ended in between, without its
        // answer or reason in the copy read. Read it again.
        const ended = (await queue.getJob(requestId)) ?? job;
        if (state === "failed") return { status: "failed", error: ended.failedReason ?? "failed" };
        const answer = ended.returnvalue as RunAnswer | null;
        if (answer) return { status: "completed", answer };
        return { status: "unknown" };
      }
      if (state !== "active") return { status: "waiting" };
      const parked = sessionId ? await this.command.hget(this.keys.run(sessionId), "parked") : null;
      return parked ? { status: "parked" } : { status: "running" };
    });
  }

  /**
   * What the running coordinators say they serve: each one's agents (name, model, tools,
   * turn cap) and the digest of its definitions, sorted by coordinator id. Coordinators whose
   * digests differ disagree on the definitions (each logs it).
   */
  async agents(): Promise<AgentAnnouncement[]> {
    await this.ready();
    return this.guard(() => readAgentAnnouncements(this.command, this.keys));
  }

  /**
   * The shared provider limits the coordinators apply (`YIEM_MODEL_LIMITS`) as Redis holds
   * them now: each one's 429 pause, the requests and tokens of its last window, and the model
   * calls waiting for their turn, with the coordinator and agent of each (`readProviderLimits`).
   */
  async providerLimits(): Promise<ProviderLimitState[]> {
    await this.ready();
    return this.guard(() => readProviderLimits(this.command, this.keys));
  }

  /**
   * The cluster-wide load of each limited tool's own queue (`tool.<name>`, see
   * `remoteQueueOf`) that a live worker serves: calls waiting (including those held back by
   * the tool's limits) and calls running.
   */
  async limitedToolLoad(): Promise<LimitedToolLoad[]> {
    const workers = await this.workers();
    const queues = [...new Set(workers.flatMap((w) => w.queues))].filter((q) =>
      q.startsWith("tool."),
    );
    if (queues.length === 0) return [];
    const { QueueKeys } = await import("bullmq");
    const keysOf = new QueueKeys(this.keys.bullPrefix);
    return Promise.all(
      queues
        .sort()
        .map((name) => this.readLoad(name, keysOf.getKeys(this.keys.toolQueues(name)[0] ?? name))),
    );
  }

  /** Counts one queue's waiting and running jobs with plain reads (a read-only ACL suffices). */
  private async readLoad(queue: string, keys: Record<string, string>): Promise<LimitedToolLoad> {
    const replies = await this.guard(() =>
      this.command
        .pipeline()
        .llen(keys.wait ?? "")
        .zcard(keys.prioritized ?? "")
        .zcard(keys.delayed ?? "")
        .llen(keys.active ?? "")
        .exec(),
    );
    const [wait = 0, prioritized = 0, delayed = 0, active = 0] = (replies ?? []).map(([err, n]) => {
      if (err) throw new RedisUnavailableError(this.target, err);
      return Number(n);
    });
    return {
      tool: queue.slice("tool.".length),
      queue,
      waiting: wait + prioritized + delayed,
      running: active,
    };
  }

  /**
   * Approves a tool call awaiting approval (`toolCallId`: the call key `pending` lists): adds
   * a decision job to the decisions queue (the approver role's, `docs/SECURITY.md`) and waits
   * until a coordinator recorded it. Throws
   * `DecisionRefusedError` (`no-op: …`) when the call no longer waits or was decided already;
   * never makes a call run twice.
   */
  approve(
    sessionId: string,
    toolCallId: string,
    options: DecisionOptions = {},
  ): Promise<DecisionJobResult> {
    return this.decide(
      { sessionId, toolCallId, approved: true, ...pick(options) },
      options.timeoutMs,
    );
  }

  /** Denies a tool call awaiting approval; the model reads `reason` as the call's error result. As `approve`. */
  deny(
    sessionId: string,
    toolCallId: string,
    options: DecisionOptions = {},
  ): Promise<DecisionJobResult> {
    return this.decide(
      { sessionId, toolCallId, approved: false, ...pick(options) },
      options.timeoutMs,
    );
  }

  /**
   * Tool calls awaiting approval, with their arguments, oldest first: of one session, or of
   * the whole cluster. Needs the approver role (`docs/SECURITY.md`).
   */
  async pendingApprovals(sessionId?: string): Promise<PendingApproval[]> {
    await this.ready();
    return this.guard(() => new ApprovalStore(this.command, this.keys).pending(sessionId));
  }

  /**
   * Tool calls awaiting approval, with their arguments, oldest first, in the trees of the root
   * sessions `rootSessionIds` (each root's calls and its child runs'): read from each root's
   * index of its tree, so the list costs what it returns (and one read per root), however many
   * calls wait elsewhere in the cluster. Needs the approver role (`docs/SECURITY.md`).
   */
  async pendingApprovalsUnder(rootSessionIds: readonly string[]): Promise<PendingApproval[]> {
    await this.ready();
    return this.guard(() =>
      new ApprovalStore(this.command, this.keys).pendingUnder(rootSessionIds),
    );
  }

  private async decide(
    decision: DecisionJobData["decision"],
    timeoutMs: number = DEFAULTS.decisionTimeoutMs,
  ): Promise<DecisionJobResult> {
    const data: DecisionJobData = { decision };
    readDecisionJob(data);
    await this.ready();
    const queue = await this.openQueue(this.keys.decisionsQueue);
    const job = await this.guard(() =>
      addJobLean(queue, "decision", data, { jobId: randomUUID(), ...JOB_RETENTION }),
    );
    const id = job.id ?? "";
    for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
      const state = await this.guard(() => queue.getJobState(id));
      if (state === "completed" || state === "failed") {
        const done = await this.guard(() => queue.getJob(id));
        if (state === "failed") throw new DecisionRefusedError(done?.failedReason ?? "failed");
        return done?.returnvalue as DecisionJobResult;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new ResponseTimeoutError(id, timeoutMs);
  }

  /**
   * The agent session `sessionId` belongs to now: the one that started it, or the last one it
   * was handed off to (`transfer_to_<name>`); `undefined` for a session with no agent recorded
   * (unknown, expired, or from before agents). Requests naming another agent are refused.
   */
  async sessionAgent(sessionId: string): Promise<string | undefined> {
    await this.ready();
    return this.guard(() => new SessionAgents(this.command, this.keys).read(sessionId));
  }

  /**
   * The child runs a session's agent started (its `agent__<name>` calls), oldest first: each
   * one's call key, agent, session, status (`running`, `done`, `error`, `aborted`, `budget`),
   * usage (its own tree's) and start and end times. A child's own children are listed by
   * calling this with its `sessionId`.
   */
  async children(sessionId: string): Promise<ChildRun[]> {
    await this.ready();
    return this.guard(() => readChildren(this.command, this.keys, sessionId));
  }

  /**
   * What a session used (tokens, model and tool calls; `costUsd` when its coordinators price),
   * its child runs' included: the summary its last finished run stored, one `GET`. A session
   * without one (no run of it finished since the summary was kept, as for one from an older
   * version) is summed from its transcript instead, which is read whole; never writes.
   * Usage of a run still open (parked, say) counts once it finishes.
   */
  async sessionUsage(sessionId: string): Promise<RunUsage> {
    await this.ready();
    return this.guard(async () => {
      const summary = await this.store.readSessionUsage(sessionId);
      return summary ?? sumRunUsage(await this.store.loadMessages(sessionId));
    });
  }

  /** The stored transcript of a session. */
  async messages(sessionId: string) {
    await this.ready();
    return this.guard(() => this.store.loadMessages(sessionId));
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    this.responses.close();
    this.responsesListening?.subscriber.disconnect();
    this.eventHub?.close();
    await this.queues.close();
    const redis = this.command;
    if (redis.status === "connecting" || redis.status === "connect") {
      // Let the attempt in flight settle first: disconnecting in the middle of it leaves
      // ioredis with a connect promise that rejects with nobody listening.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 3000);
        for (const event of ["ready", "close", "end"]) {
          redis.once(event, () => {
            clearTimeout(timer);
            resolve();
          });
        }
      });
    }
    redis.disconnect();
  }

  /**
   * Waits for the connection, or fails fast with `RedisUnavailableError`. Calls made while it
   * is not ready share one wait: a burst of sends during an outage adds one pair of listeners
   * to the connection, not one per call (Node warned of a leak past ten).
   */
  private ready(): Promise<void> {
    if (this.command.status === "ready") return Promise.resolve();
    this.readyWait ??= this.waitForReady().finally(() => {
      this.readyWait = undefined;
    });
    return this.readyWait;
  }

  /** One wait for the connection: ready, or its error, or 3 s. */
  private async waitForReady(): Promise<void> {
    const redis = this.command;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: unknown) => {
        clearTimeout(timer);
        redis.off("ready", onReady);
        redis.off("error", onError);
        if (err) reject(new RedisUnavailableError(this.target, err));
        else resolve();
      };
      const onReady = () => done();
      const onError = (err: unknown) => done(err);
      const timer = setTimeout(() => done(new Error("connection timed out")), 3000);
      redis.once("ready", onReady);
      redis.once("error", onError);
      if (redis.status === "wait" || redis.status === "end") redis.connect().catch(() => undefined);
    });
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (err) {
      throw new RedisUnavailableError(this.target, err);
    }
  }
}
