import { createHash } from "node:crypto";
import { busEventJson } from "../protocol/busEvent.js";
import { type InputKind, type RunAnswer, runAnswerText } from "../protocol/coordinatorJob.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { NO_REPLICA_ACKS, type ReplicaAcks } from "../redis/replicaAcks.js";
import {
  AppendReply,
  DrainInputsReply,
  EnqueueInputReply,
  FinishRunReply,
  MarkRunAbortedReply,
  ReleaseLeaseIfIdleReply,
  RenewLeaseReply,
  StartRunReply,
  TakeAbortRequestReply,
  TakeOverLeaseReply,
} from "../redis/scriptReplies.js";
import type {
  AgentEndEvent,
  AgentMessage,
  AssistantMessage,
  RunBudget,
  RunUsage,
  UserMessage,
} from "../types/index.js";
import { type EventBatches, eventBatchesOf } from "./eventBatches.js";
import { type StreamCaps, streamCaps } from "./eventBus.js";
import { inputOrder } from "./inputOrder.js";
import { ScriptedStore } from "./scriptedStore.js";

/**
 * How long a session's transcript and events are kept after its last run (30 days); every
 * finished run pushes the expiry back.
 */
export const SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;

/** How long a stored response stays readable by `waitForResponse` (one day). */
export const RESPONSE_TTL_SECONDS = 24 * 60 * 60;

/**
 * A digest of an input's content (128 bits of SHA-256, base64url): what makes two deliveries
 * under one id the same request. The message's timestamp, set when it was read, is left out.
 */
export function inputDigest(message: UserMessage): string {
  return createHash("sha256")
    .update(JSON.stringify(message.content))
    .digest("base64url")
    .slice(0, 22);
}

/**
 * A stored answer (`<p>:s:{sid}:response:<inputId>`): `{ response, usage }`, or, stored by a
 * version of Yiem that did not count usage, the bare response message.
 */
export function parseStoredAnswer(text: string): RunAnswer {
  const stored = JSON.parse(text) as RunAnswer | AssistantMessage;
  return "role" in stored ? { response: stored } : stored;
}

/** What `startRun` found: a run to resume, a new run, or nothing to do. */
export type RunStart =
  /**
   * `from`: the index of the run's first message in the transcript, when the run recorded it.
   * `order`: the order of the input that opened it (what `drainInputs` compares later inputs
   * with), when the run recorded it. `transcriptLength`: the stored transcript's length now; a
   * holder whose copy differs reads it again (the reply of the call that opened the run was
   * lost and the call sent again, so the copy lacks what that call moved in).
   */
  | {
      kind: "resume";
      runId: string;
      inputIds: string[];
      from: number | undefined;
      order: string | undefined;
      transcriptLength: number;
    }
  /**
   * `aborted`: the run opened aborted (its tree was aborted before it opened: `abortChildRun`).
   * `joined`: the plain inputs waiting behind the opening one, already in the transcript
   * behind it: what the run's first drain takes in (`drainInputs` is not asked then).
   */
  | {
      kind: "new";
      runId: string;
      inputIds: string[];
      message: UserMessage;
      aborted: boolean;
      order: string;
      joined: DrainedInputs;
    }
  | { kind: "idle" }
  | { kind: "lost" }
  /** The open run waits for approvals: the lease was released in the same step. */
  | { kind: "parked" }
  /** A follow-up is waiting, but too fresh to open a run yet: ask again after `retryInMs`. */
  | { kind: "settling"; retryInMs: number };

/** Inputs moved into a run's transcript, in order: their ids and messages. */
export interface DrainedInputs {
  inputIds: string[];
  messages: UserMessage[];
}

/** A script's reply pairs (input id, message JSON) as `DrainedInputs`. */
function readDrainedPairs(pairs: ReadonlyArray<number | string>): DrainedInputs {
  const inputIds: string[] = [];
  const messages: UserMessage[] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    inputIds.push(String(pairs[i]));
    messages.push(JSON.parse(String(pairs[i + 1])) as UserMessage);
  }
  return { inputIds, messages };
}

/**
 * How long a fresh follow-up waits before it may open a run of an idle session: long enough
 * for an older input of the same session, fetched by another coordinator at the same moment,
 * to be recorded first (so sends keep their order across coordinators).
 */
export const FOLLOW_UP_SETTLE_MS = 25;

/**
 * How long an input waits for a request sent before it (`keys.submitted`, added by
 * `YiemClient.send`) to be recorded before it opens a run anyway: the older request's job
 * failed, was refused, or was removed before any coordinator recorded it.
 */
export const SUBMITTED_WAIT_MS = 5000;

/** How long a session's set of sent requests lives past the last send (entries older than
 * `SUBMITTED_WAIT_MS` are dropped as runs open). */
export const SUBMITTED_TTL_SECONDS = 3600;

/**
 * What recording an input found: its run's response, an input already known, a new one, or
 * its id already recorded in the session with another input (`reused`: nothing recorded).
 */
export type EnqueueOutcome =
  | { kind: "answered"; answer: RunAnswer }
  | { kind: "known" }
  | { kind: "reused" }
  | { kind: "queued" };

/**
 * What a guarded write reports when the transcript was not the length it expected: a write
 * sent right behind another whose reply is still on its way finds that the other did not land,
 * and changes nothing (see `PipelinedTranscript`).
 */
export const NOT_AS_EXPECTED = "notAsExpected" as const;

/** A guarded write's `NOT_AS_EXPECTED` outcome. */
export type NotAsExpected = typeof NOT_AS_EXPECTED;

/** The `expectLength` argument of a script: the length, or '' for no guard. */
export function guardArg(expectLength: number | undefined): number | string {
  return expectLength ?? "";
}

/**
 * A session's durable state in Redis: its transcript, the inputs waiting for a run, the run in
 * progress, and the lease that says which coordinator holds it. Only coordinators write it,
 * but for a client's abort request (`requestAbort`). Every write made on behalf
 * of a holder is fenced by its lease token; a write with a stale token changes nothing and
 * is reported (`false`, `lost`, or `LeaseLost` from the caller's point of view).
 */
export class SessionStore extends ScriptedStore {
  /** Where appends go together with the session's events (`eventBatchesOf`), unless acknowledged. */
  private readonly batches: EventBatches | undefined;
  /** The connection's event batches, for what they know of a session's stream (`closeGuess`). */
  private readonly events: EventBatches;

  constructor(
    redis: RedisClient,
    keys: ClusterKeys,
    acks: ReplicaAcks = NO_REPLICA_ACKS,
    caps: StreamCaps = streamCaps(),
  ) {
    super(redis, keys, acks, caps);
    // A replica-acknowledged append needs its own WAIT behind it: it goes out alone.
    this.events = eventBatchesOf(redis, keys);
    this.batches = acks.replicas > 0 ? undefined : this.events;
  }

  /**
   * Takes the lease (or renews it when already ours). A free lease, what every run's start
   * finds, costs one command (`SET NX`); a held one is renewed only when the token is ours
   * (`renewLease-1.lua`), as if the `SET` had found it held a moment later.
   */
  async acquire(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    const lease = this.keys.lease(sessionId);
    if ((await this.redis.set(lease, token, "PX", leaseMs, "NX")) === "OK") return true;
    return (await this.redis.yiemRenewLease(lease, token, leaseMs)) === RenewLeaseReply.renewed;
  }

  /**
   * Takes the lease when it is free (`SET NX`), for a token of its own (never held before, so
   * never renewed: `acquire`'s renewal is for a holder taking its session again).
   */
  async acquireFree(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.lease(sessionId), token, "PX", leaseMs, "NX")) === "OK";
  }

  /** Extends the lease; false when it is no longer ours. */
  async renew(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    const reply = await this.redis.yiemRenewLease(this.keys.lease(sessionId), token, leaseMs);
    return reply === RenewLeaseReply.renewed;
  }

  /** Releases the lease only when no input waits and no run is open: "released" | "busy" | "lost". */
  async releaseIfIdle(sessionId: string, token: string): Promise<"released" | "busy" | "lost"> {
    const k = this.keys;
    const result = await this.redis.yiemReleaseLeaseIfIdle(
      k.lease(sessionId),
      k.pendingInputs(sessionId),
      k.pendingFollowUps(sessionId),
      k.run(sessionId),
      token,
    );
    if (result === ReleaseLeaseIfIdleReply.released) return "released";
    return result === ReleaseLeaseIfIdleReply.workPending ? "busy" : "lost";
  }

  /**
   * Marks the session's open run as aborted, taking a client's abort request in the same step
   * (see `markRunAborted-2.lua`); false when no run is open. Not fenced: an abort may come from
   * any coordinator.
   */
  async markRunAborted(sessionId: string): Promise<boolean> {
    const k = this.keys;
    const reply = await this.redis.yiemMarkRunAborted(
      k.run(sessionId),
      k.abortRequested(sessionId),
    );
    return reply === MarkRunAbortedReply.marked;
  }

  /**
   * Whether the session's open run is aborted: marked so (`markRunAborted`), or named by a
   * client's abort request (`requestAbort`), which this takes into the run (see
   * `takeAbortRequest-2.lua`). Not fenced: any coordinator may take it.
   */
  async takeAbortRequest(sessionId: string): Promise<boolean> {
    const k = this.keys;
    const reply = await this.redis.yiemTakeAbortRequest(
      k.run(sessionId),
      k.abortRequested(sessionId),
    );
    return reply === TakeAbortRequestReply.aborted;
  }

  /**
   * Records an abort of the session's open run, durably: the `abortRequested` mark names the
   * run, and whichever coordinator holds, resumes or next meets that run stops it
   * (`takeAbortRequest`), even if none was alive to hear the announcement. Returns the run's
   * id, or `undefined` when no run is open (nothing is recorded). What a client calls, with two
   * plain commands (the client role may read the run and write only this mark, and a script's
   * keys need write access): a run that ends between them leaves a mark naming it, which no
   * later run matches, so an abort never reaches a later run. Kept as long as the session.
   */
  async requestAbort(sessionId: string): Promise<string | undefined> {
    const k = this.keys;
    const runId = await this.redis.hget(k.run(sessionId), "runId");
    if (runId === null) return undefined;
    await this.redis.set(k.abortRequested(sessionId), runId, "EX", SESSION_TTL_SECONDS);
    return runId;
  }

  /** Releases the lease whatever is pending (a hand-over); the run stays open for the next holder. */
  async release(sessionId: string, token: string): Promise<void> {
    await this.redis.yiemReleaseLease(this.keys.lease(sessionId), token);
  }

  /**
   * Which of these sessions need a holder: no coordinator holds them, or one whose life
   * `holderIsDead` says is over (`coordinator/failureDetector.ts`), and their open run (if
   * any) is not parked waiting for approvals. Sent at once.
   */
  async needHolder(
    sessionIds: string[],
    holderIsDead: (token: string) => boolean = () => false,
  ): Promise<boolean[]> {
    if (sessionIds.length === 0) return [];
    // Two commands per session, sent together: sessions live in different slots.
    const k = this.keys;
    const held = Promise.all(sessionIds.map((id) => this.redis.get(k.lease(id))));
    const parked = Promise.all(sessionIds.map((id) => this.redis.hget(k.run(id), "parked")));
    const [leases, marks] = await Promise.all([held, parked]);
    return sessionIds.map((_, i) => {
      const holder = leases[i] ?? null;
      return (holder === null || holderIsDead(holder)) && marks[i] !== "1";
    });
  }

  /** The token of the session's lease holder, if it is held. */
  async leaseHolder(sessionId: string): Promise<string | null> {
    return this.redis.get(this.keys.lease(sessionId));
  }

  /**
   * Takes the lease from a holder found dead, while it still holds `deadToken`
   * (`takeOverLease-1.lua`); false when the lease moved on meanwhile.
   */
  async takeOver(
    sessionId: string,
    deadToken: string,
    token: string,
    leaseMs: number,
  ): Promise<boolean> {
    const lease = this.keys.lease(sessionId);
    const reply = await this.redis.yiemTakeOverLease(lease, deadToken, token, leaseMs);
    return reply === TakeOverLeaseReply.takenOver;
  }

  /**
   * Records an input for its session, once: delivering the same input id again (a retried
   * or stalled job, or a job added again under the id with the same input) returns its
   * response when it was answered and changes nothing otherwise. The id is the key of one
   * input: under another one it is `reused`, and nothing is recorded. Inputs compare by
   * content (`inputDigest`), not by the time they were read.
   * Waiting inputs run in ascending `order` (see `inputOrder`); a follow-up younger than
   * `FOLLOW_UP_SETTLE_MS` opens no run yet.
   * A request's own `budget` is recorded with the input (`readRunBudget` reads it back).
   * Not fenced: any coordinator records inputs; only the holder moves them into runs.
   */
  async enqueueInput(
    sessionId: string,
    requestId: string,
    kind: InputKind,
    message: UserMessage,
    order: number,
    budget?: RunBudget,
  ): Promise<EnqueueOutcome> {
    const k = this.keys;
    const [code, response] = await this.redis.yiemEnqueueInput(
      k.inputs(sessionId),
      k.pendingInputs(sessionId),
      k.pendingFollowUps(sessionId),
      k.response(sessionId, requestId),
      k.inputDigests(sessionId),
      k.inputBudgets(sessionId),
      k.sessionKnown(sessionId),
      k.submitted(sessionId),
      requestId,
      kind,
      JSON.stringify(message),
      String(order),
      inputDigest(message),
      SESSION_TTL_SECONDS,
      budget ? JSON.stringify(budget) : "",
      SESSION_TTL_SECONDS,
    );
    if (code === EnqueueInputReply.reused) return { kind: "reused" };
    if (code === EnqueueInputReply.answered) {
      return { kind: "answered", answer: parseStoredAnswer(String(response)) };
    }
    return { kind: code === EnqueueInputReply.alreadyKnown ? "known" : "queued" };
  }

  /**
   * Whether input `requestId` was recorded for `sessionId` (`enqueueInput`, under any content):
   * a request delivered again, whose first delivery was accepted.
   */
  async isRecorded(sessionId: string, requestId: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.inputDigests(sessionId), requestId)) === 1;
  }

  /** Opens the next run from the waiting inputs, or reports the run in progress. */
  async startRun(sessionId: string, token: string): Promise<RunStart> {
    const k = this.keys;
    const settledBefore = inputOrder(Date.now() - FOLLOW_UP_SETTLE_MS, 1023);
    const givenUpBefore = inputOrder(Date.now() - SUBMITTED_WAIT_MS, 0);
    const [code, id, ...rest] = await this.redis.yiemStartRun(
      k.lease(sessionId),
      k.run(sessionId),
      k.runInputs(sessionId),
      k.inputs(sessionId),
      k.pendingInputs(sessionId),
      k.pendingFollowUps(sessionId),
      k.messages(sessionId),
      k.abortOnStart(sessionId),
      k.submitted(sessionId),
      token,
      String(settledBefore),
      String(givenUpBefore),
    );
    if (code === StartRunReply.notOurs) return { kind: "lost" };
    if (code === StartRunReply.nothingToDo) return { kind: "idle" };
    if (code === StartRunReply.parked) return { kind: "parked" };
    if (code === StartRunReply.olderOnItsWay) return { kind: "settling", retryInMs: 20 };
    if (code === StartRunReply.followUpWaits) {
      const createdAt = Math.floor(Number(id) / 1024);
      const retryInMs = Math.min(
        FOLLOW_UP_SETTLE_MS,
        Math.max(1, createdAt + FOLLOW_UP_SETTLE_MS - Date.now()),
      );
      return { kind: "settling", retryInMs };
    }
    const runId = String(id);
    if (code === StartRunReply.resume) {
      const [from, order, length, ...inputIds] = rest.map(String);
      return {
        kind: "resume",
        runId,
        inputIds,
        from: from ? Number(from) : undefined,
        order: order || undefined,
        transcriptLength: Number(length),
      };
    }
    const [opening, abortedFlag, order, ...joined] = rest;
    const message = JSON.parse(String(opening)) as UserMessage;
    const aborted = Number(abortedFlag) === 1;
    return {
      kind: "new",
      runId,
      inputIds: [runId],
      message,
      aborted,
      order: String(order),
      joined: readDrainedPairs(joined),
    };
  }

  /**
   * Moves waiting plain inputs submitted after the open run's first input into the transcript
   * and the run; returns their ids and messages, or `undefined` when the lease is lost. With
   * `expectLength`, moves nothing and returns `NOT_AS_EXPECTED` unless the transcript has
   * that many messages. `runOrder` is the run's order as `startRun` returned it (read from the
   * run when not given).
   */
  async drainInputs(
    sessionId: string,
    token: string,
    expectLength?: number,
    runOrder?: string,
  ): Promise<DrainedInputs | NotAsExpected | undefined> {
    const k = this.keys;
    const expected = guardArg(expectLength);
    const order = runOrder ?? "";
    // With the session's other writes when they are batched: right behind a batch's results.
    const [code, ...pairs] = this.batches
      ? await this.batches.drain(sessionId, this.caps, { token, expected, order })
      : await this.redis.yiemDrainInputs(
          k.lease(sessionId),
          k.runInputs(sessionId),
          k.inputs(sessionId),
          k.pendingInputs(sessionId),
          k.messages(sessionId),
          k.run(sessionId),
          token,
          expected,
          order,
        );
    if (code === DrainInputsReply.notOurs) return undefined;
    if (code === DrainInputsReply.notExpectedLength) return NOT_AS_EXPECTED;
    return readDrainedPairs(pairs);
  }

  /**
   * Appends a message to the transcript (a tool result clears its running mark); false when
   * the lease is lost; `NOT_AS_EXPECTED` (nothing written) when `expectLength` is given and the
   * transcript has another length. Without replica acknowledgements it joins the session's
   * queued writes, as `appendMany` does (a final answer behind its streamed text, one script).
   */
  async append(
    sessionId: string,
    token: string,
    message: AgentMessage,
    expectLength?: number,
    /** The transcript's length as the caller knows it: a hint that saves a read, never a guard. */
    knownLength?: number,
  ): Promise<boolean | NotAsExpected> {
    if (this.batches)
      return this.appendMany(sessionId, token, [message], expectLength, knownLength);
    const k = this.keys;
    const callId = message.role === "toolResult" ? message.toolCallId : "";
    const length = await this.redis.yiemAppendMessage(
      k.lease(sessionId),
      k.messages(sessionId),
      k.running(sessionId),
      token,
      JSON.stringify(message),
      callId,
      guardArg(expectLength),
      guardArg(knownLength),
    );
    return length === AppendReply.notExpectedLength
      ? NOT_AS_EXPECTED
      : length !== AppendReply.notOurs;
  }

  /**
   * Appends several messages in order, in one round trip; false when the lease is lost;
   * `NOT_AS_EXPECTED` (nothing written) when `expectLength` is given and the transcript has
   * another length.
   */
  async appendMany(
    sessionId: string,
    token: string,
    messages: AgentMessage[],
    expectLength?: number,
    /** The transcript's length as the caller knows it: a hint that saves a read, never a guard. */
    knownLength?: number,
  ): Promise<boolean | NotAsExpected> {
    if (messages.length === 0) return true;
    const k = this.keys;
    const pairs = messages.flatMap((m) => [
      JSON.stringify(m),
      m.role === "toolResult" ? m.toolCallId : "",
    ]);
    const expected = guardArg(expectLength);
    const known = guardArg(knownLength);
    const length = this.batches
      ? await this.batches.append(sessionId, this.caps, { token, expected, known, pairs })
      : await this.redis.yiemAppendMessages(
          k.lease(sessionId),
          k.messages(sessionId),
          k.running(sessionId),
          token,
          expected,
          known,
          ...pairs,
        );
    return length === AppendReply.notExpectedLength
      ? NOT_AS_EXPECTED
      : length !== AppendReply.notOurs;
  }

  /**
   * Marks a tool call as running in the holder's own process (so a successor knows it was
   * interrupted). False, and nothing written, when `token` no longer holds the lease: the
   * caller must not run the call (see `markRunning-2.lua`).
   */
  async markRunning(sessionId: string, token: string, toolCallId: string): Promise<boolean> {
    const k = this.keys;
    const marked = await this.redis.yiemMarkRunning(
      k.lease(sessionId),
      k.running(sessionId),
      token,
      toolCallId,
      Date.now(),
    );
    return marked === 1;
  }

  /** The tool calls a previous holder was running in its process when it stopped. */
  async loadRunning(sessionId: string): Promise<string[]> {
    return this.redis.hkeys(this.keys.running(sessionId));
  }

  /**
   * Closes the run: stores its answer (the response and the `agentEnd` event's usage) for every
   * input it answers (`inputIds`, as the holder tracked them from `startRun` and
   * `drainInputs`) and publishes its `agentEnd` event, atomically (see `finishRun.lua`).
   * Returns `"idle"` when nothing waits in the session (the lease was released in the same
   * step, as `releaseIfIdle` would have), `"closed"` when work waits (the lease is kept), false
   * when the lease is lost; `NOT_AS_EXPECTED` (nothing changed) when `expectLength` is given
   * and the transcript has another length. `sessionUsage` (what the whole transcript used) is
   * stored as the session's usage summary in the same step (`readSessionUsage`). `queued`:
   * the run's events not sent yet (`EventPublisher.takeQueued`'s writes), stored first in the
   * same step whatever it returns, but for those of kind `S` / `L` (`EventPublisher.encode`),
   * stored only when the run closes. `answer`: the run's final answer, not in the transcript
   * yet, appended in the same step first (fenced, guarded by `expectLength` when given, the
   * length before it; `knownLength` as `append` takes it): the run closes only with it.
   */
  async finishRun(
    sessionId: string,
    token: string,
    response: AssistantMessage,
    run: {
      runId: string;
      inputIds: string[];
      event: AgentEndEvent;
      agent?: string;
      sessionUsage?: RunUsage;
      /** The answer as stored (`runAnswerText`), when the caller made it already. */
      answerText?: string;
    },
    expectLength?: number,
    queued: readonly string[] = [],
    answer?: { message: AgentMessage; knownLength: number },
  ): Promise<"closed" | "idle" | false | NotAsExpected> {
    const k = this.keys;
    const eventJson = busEventJson(run.event, {
      sessionId,
      runId: run.runId,
      inputIds: run.inputIds,
    });
    const keys = [
      k.lease(sessionId),
      k.run(sessionId),
      k.runInputs(sessionId),
      k.inputs(sessionId),
      k.stream(sessionId),
      k.messages(sessionId),
      k.pendingInputs(sessionId),
      k.pendingFollowUps(sessionId),
      k.running(sessionId),
      k.inputBudgets(sessionId),
      k.sessionUsage(sessionId),
      ...run.inputIds.map((id) => k.response(sessionId, id)),
    ];
    // What this connection's own writes left as the stream's newest entry: no read for agentEnd.
    const guess = this.events.closeGuess(sessionId);
    const done = await this.redis.yiemFinishRun(
      keys.length,
      ...keys,
      token,
      run.answerText ?? runAnswerText({ response, usage: run.event.usage, agent: run.agent }),
      RESPONSE_TTL_SECONDS,
      k.responsesChannel,
      k.eventChannel(sessionId),
      eventJson,
      this.caps.maxLength,
      SESSION_TTL_SECONDS,
      JSON.stringify(run.inputIds),
      guardArg(expectLength),
      this.caps.maxBytes,
      run.sessionUsage ? JSON.stringify(run.sessionUsage) : "",
      guess,
      answer ? JSON.stringify(answer.message) : "",
      answer ? answer.knownLength : "",
      ...queued,
    );
    if (done === FinishRunReply.notExpectedLength) return NOT_AS_EXPECTED;
    if (done === FinishRunReply.closedIdle) return "idle";
    return done === FinishRunReply.closed && "closed";
  }

  /**
   * The session's usage summary: what its whole transcript used as of its last finished run
   * (`finishRun`); `undefined` when no run finished since the summary was kept (a session
   * older than it, or one whose first run is still open). One `GET`: never reads the transcript.
   */
  async readSessionUsage(sessionId: string): Promise<RunUsage | undefined> {
    const text = await this.redis.get(this.keys.sessionUsage(sessionId));
    return text ? (JSON.parse(text) as RunUsage) : undefined;
  }

  /** The whole transcript. */
  async loadMessages(sessionId: string): Promise<AgentMessage[]> {
    const items = await this.redis.lrange(this.keys.messages(sessionId), 0, -1);
    return items.map((text) => JSON.parse(text) as AgentMessage);
  }

  /**
   * The stored answers of these inputs (`undefined` where none is stored yet): one read
   * per input, sent at once (inputs of different sessions live in different slots).
   */
  async readAnswers(
    inputs: Array<{ sessionId: string; requestId: string }>,
  ): Promise<Array<RunAnswer | undefined>> {
    return Promise.all(
      inputs.map(({ sessionId, requestId }) => this.readAnswer(sessionId, requestId)),
    );
  }

  /** A stored answer (response and usage), if the run that answers `requestId` of `sessionId` has ended. */
  async readAnswer(sessionId: string, requestId: string): Promise<RunAnswer | undefined> {
    const text = await this.redis.get(this.keys.response(sessionId, requestId));
    return text ? parseStoredAnswer(text) : undefined;
  }

  /** A stored response, if the run that answers `requestId` of `sessionId` has ended. */
  async readResponse(sessionId: string, requestId: string): Promise<AssistantMessage | undefined> {
    return (await this.readAnswer(sessionId, requestId))?.response;
  }
}
