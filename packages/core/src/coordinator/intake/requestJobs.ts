import { createHash, randomUUID } from "node:crypto";
import { type Job, UnrecoverableError, type Worker } from "bullmq";
import { DEFAULT_AGENT } from "../../agents/defineAgent.js";
import type { RunFeature } from "../../features/runFeature.js";
import type { UserInputLimits } from "../../loop/toUserMessage.js";
import type { Logger } from "../../ops/logger.js";
import {
  buildCoordinatorJobResult,
  type CoordinatorJobResult,
  type CoordinatorRequest,
  type RunAnswer,
  readCoordinatorJob,
} from "../../protocol/coordinatorJob.js";
import { InvalidCoordinatorJobError } from "../../protocol/errors.js";
import { classifyBullmqError, JobMovedOnError } from "../../redis/bullmqErrors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import { completeJob } from "../../redis/leanCompletion.js";
import { anyError, retryTransient } from "../../redis/retryTransient.js";
import { claimAtTake } from "../../redis/safeTakeWorker.js";
import { inputOrder } from "../../state/inputOrder.js";
import type { RequestSessions } from "../../state/requestSessions.js";
import type { AnswerListener, ResponseWaits } from "../../state/responseWaits.js";
import type { EnqueueOutcome, SessionStore } from "../../state/sessionStore.js";
import type { EarlyTake, SessionTasks } from "../run/sessionTasks.js";
import {
  type AgentCheck,
  claimNewSessionAgent,
  claimSessionAgent,
  type EarlyAgentClaim,
  unknownAgent,
} from "./agentOf.js";
import { type HeldRequest, jobOfHeld, plainAttemptsOf } from "./heldRequest.js";
import type { JobLocks } from "./jobLocks.js";
import type { Slot } from "./runSlots.js";

/** What handling coordinator-queue jobs (requests and decisions) needs. */
export interface RequestJobsOptions {
  /** The coordinator queue's worker the jobs were fetched with (completing them needs it). */
  worker: Worker;
  store: SessionStore;
  tasks: SessionTasks;
  answers: ResponseWaits;
  /** Keeps the held jobs' locks: `RequestJobs` starts it, with its handler of lost locks. */
  locks: JobLocks;
  limits: UserInputLimits;
  log: Logger;
  /** The random sessions of jobs that name none. */
  sessions: RequestSessions;
  /** The agents served, and the agent each session belongs to. */
  agents: AgentCheck;
  /** The run features, for their part of the intake (`RunFeature.intake`). */
  features: readonly RunFeature[];
  /** The cluster's keys (an input's response, the layout). */
  keys: ClusterKeys;
}

/**
 * Why a job is refused whose id the session already recorded with another input: a job id is
 * the key of one request (its job was removed, and the id added again for something else).
 */
function reusedJobId(requestId: string, sessionId: string): InvalidCoordinatorJobError {
  return new InvalidCoordinatorJobError(
    "jobId",
    `${requestId} was already used in session ${sessionId} for a different input`,
  );
}

type OrderedRequest = CoordinatorRequest & { order: number };

/**
 * What went out right behind an input's record for its session's run: nothing, the take of
 * the session's lease (for `ensureRunning`), or, for a session just made for the request, the
 * session's task itself, its run's opening sent too (`SessionTasks.startFresh`; it keeps the
 * run slot).
 */
type StartSent = { kind: "none" } | { kind: "take"; take: EarlyTake } | { kind: "task" };

/** Tries at failing an invalid job (under 1 s of pauses in all). */
const REFUSE_ATTEMPTS = 5;

/**
 * The coordinator-queue jobs this coordinator holds. Each job is one request: validated (a
 * bad one, or a decision, which belongs on the decisions queue, fails at once, unrecoverably,
 * naming the field), its input recorded for its session (a random one, kept in the job, when
 * it names none) exactly once however often the job is delivered, then held, without a run
 * slot, until the run that answers it stores its response; the job then completes with
 * `{ sessionId, requestId, runId (its alias), agent, response, usage, output? }`. A request naming an agent not served, or a session
 * of another agent, fails at once too (`agentOf.ts`); one a feature defers (`FeatureIntake.defers`:
 * its tenant's runs at once are at their cap) goes back to the queue, delayed. Redis errors while recording or completing are retried
 * while the job's lock is kept; a closing coordinator hands its jobs back to the queue.
 *
 * A job waiting for its answer is a record, not a task: its `HeldRequest`, its lock's entry in
 * `JobLocks` and a watch of its answer (`ResponseWaits.watch`, told by the run that answers
 * it here, the responses channel or a recheck); no promise, closure or BullMQ `Job` stays
 * behind, so ten thousand runs parked for approval cost the coordinator a few megabytes.
 */
export class RequestJobs {
  private readonly held = new Map<string, HeldRequest>();
  /** Told the answer of a held job's input (one listener for every job). */
  private readonly onAnswer: AnswerListener = (answer, requestId) =>
    this.answered(requestId, answer);

  constructor(private readonly options: RequestJobsOptions) {
    options.locks.start((requestId) => this.lockLost(requestId));
  }

  /** Handles a job fetched with `token`; `slot` is the run slot taken for it. Never throws. */
  handle(job: Job, token: string, slot: Slot): Promise<void> {
    const delivery = { first: job.attemptsStarted <= 1, priority: job.opts.priority ?? 0 };
    for (const { intake } of this.options.features) intake?.taken?.(job.data, delivery);
    const refusal = this.refusalOf(job.data);
    if (refusal) {
      slot.release();
      return this.refuse(job, token, refusal);
    }
    let request: CoordinatorRequest;
    try {
      request = readCoordinatorJob(job.data, this.options.limits);
    } catch (err) {
      slot.release();
      return this.refuse(job, token, err);
    }
    const unknown = unknownAgent(request, this.options.agents);
    if (unknown) {
      slot.release();
      return this.refuse(job, token, unknown);
    }
    return this.admit(job, token, slot, request);
  }

  /**
   * Takes in a valid request once every feature admits it (`FeatureIntake.admits`, before
   * anything is written for it), or refuses it with the first refusal. Redis away: the slot
   * goes back, and a live job comes back after its lock.
   */
  private async admit(
    job: Job,
    token: string,
    slot: Slot,
    request: CoordinatorRequest,
  ): Promise<void> {
    let refusal: Error | undefined;
    try {
      refusal = await retryTransient(() => this.refusalOfRequest(request));
    } catch (err) {
      slot.release();
      this.options.log.warn(
        { requestId: job.id, err: (err as Error).message },
        "could not check a request before taking it in; it is delivered again after its lock",
      );
      return;
    }
    if (refusal) {
      slot.release();
      return this.refuse(job, token, refusal);
    }
    if (request.sessionId) return this.holdForAgent(job, token, slot, request.sessionId, request);
    return this.holdInNewSession(job, token, slot, request);
  }

  /**
   * A request naming no session. Most often its take claimed its session (`claimAtTake`): a
   * session the take made goes on at once (`holdFresh`), one it found (the job delivered again)
   * as a named session. Else (the take was BullMQ's) its session is claimed now
   * (`claimSession`) with the agent's claim of the new session proposed sent beside it (one
   * round trip for both); a job that had a session already takes that claim back, and its
   * session's agent is claimed as a named session's is.
   */
  private async holdInNewSession(
    job: Job,
    token: string,
    slot: Slot,
    request: CoordinatorRequest,
  ): Promise<void> {
    const atTake = claimAtTake(job);
    if (atTake?.fresh) {
      const early = claimNewSessionAgent(request, atTake.value, this.options.agents);
      if (early) return this.holdFresh(job, token, slot, atTake.value, request, early);
    }
    if (atTake) return this.holdForAgent(job, token, slot, atTake.value, request);
    const proposed = randomUUID();
    const early = claimNewSessionAgent(request, proposed, this.options.agents);
    const sessionId = await this.claimSession(job, proposed);
    if (sessionId !== proposed) early?.takeBack();
    // Removed meanwhile, or Redis away: a live job comes back after its lock.
    if (!sessionId) return slot.release();
    const sent = sessionId === proposed ? early : undefined;
    return this.holdForAgent(job, token, slot, sessionId, request, sent);
  }

  /**
   * A request whose session its take made (`claimAtTake`): the claim of its agent goes out now
   * and is not waited for, since a session nobody knew yet is the wanted agent's, so the
   * input's record follows it in the same round trip. A claim that failed is sent once more;
   * one that fails again is logged (the session then gets an agent from its next request).
   */
  private holdFresh(
    job: Job,
    token: string,
    slot: Slot,
    sessionId: string,
    request: CoordinatorRequest,
    early: EarlyAgentClaim,
  ): Promise<void> {
    const { agents, log } = this.options;
    early.owner
      .catch(() => retryTransient(() => agents.sessions.claim(sessionId, early.wanted)))
      .catch((err: unknown) =>
        log.warn(
          { requestId: job.id, sessionId, err: (err as Error).message },
          "could not record the agent of a new session",
        ),
      );
    const agent = early.wanted;
    return this.holdUnlessDeferred(job, token, slot, sessionId, { ...request, agent }, true);
  }

  /**
   * Holds the job when its session belongs to its agent, or it names none (recording the
   * agent for a session that has none); refuses it when the session belongs to another agent.
   * `sent`: the agent's claim of the session, sent already (used by the first try only); only a
   * session just made for the request has one, which makes it `fresh` below.
   */
  private async holdForAgent(
    job: Job,
    token: string,
    slot: Slot,
    sessionId: string,
    request: CoordinatorRequest,
    sent?: EarlyAgentClaim,
  ): Promise<void> {
    let early = sent;
    const claimed = await this.readOrLetGo(
      { job, sessionId, slot },
      "could not record the agent of a session; the request is delivered again after its lock",
      () => {
        const first = early;
        early = undefined;
        return claimSessionAgent(request, sessionId, job.id ?? "", this.options.agents, first);
      },
    );
    if (!claimed) return;
    const agent = claimed.value;
    if (typeof agent === "string")
      return this.holdUnlessDeferred(job, token, slot, sessionId, { ...request, agent }, !!sent);
    slot.release();
    return this.refuse(job, token, agent);
  }

  /**
   * What `read` gives, retried on transient errors; when Redis stays away, frees the run slot
   * and logs `failure` (a live job comes back after its lock), and resolves `undefined`.
   */
  private async readOrLetGo<T>(
    taken: { job: Job; sessionId: string; slot: Slot },
    failure: string,
    read: () => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    try {
      return { value: await retryTransient(read) };
    } catch (err) {
      taken.slot.release();
      const { job, sessionId } = taken;
      this.options.log.warn({ requestId: job.id, sessionId, err: (err as Error).message }, failure);
      return undefined;
    }
  }

  /**
   * Holds the job, unless a feature defers it (`FeatureIntake.defers`): it then goes back to
   * the queue as a delayed job for that long, its attempts kept, and the run slot is freed.
   * Redis away: the slot goes back, and a live job comes back after its lock. `fresh`: the
   * session was just made for this request (`holdInNewSession`).
   */
  private async holdUnlessDeferred(
    job: Job,
    token: string,
    slot: Slot,
    sessionId: string,
    request: CoordinatorRequest,
    fresh: boolean,
  ): Promise<void> {
    const deferral = await this.readOrLetGo(
      { job, sessionId, slot },
      "could not check whether a request waits; it is delivered again after its lock",
      () => this.deferralOf(sessionId, request),
    );
    if (!deferral) return;
    const waitMs = deferral.value;
    if (waitMs === undefined) return this.hold(job, token, slot, sessionId, request, fresh);
    slot.release();
    await retryTransient(() => job.moveToDelayed(Date.now() + waitMs, token)).catch(
      (err: unknown) =>
        this.options.log.warn(
          { requestId: job.id, sessionId, err: (err as Error).message },
          "could not put back a request that waits; it is delivered again after its lock",
        ),
    );
  }

  /** The first feature's wait for a request (`FeatureIntake.defers`), or `undefined`. */
  private async deferralOf(
    sessionId: string,
    request: CoordinatorRequest,
  ): Promise<number | undefined> {
    for (const { intake } of this.options.features) {
      const waitMs = await intake?.defers?.(sessionId, request);
      if (waitMs !== undefined) return waitMs;
    }
    return undefined;
  }

  /**
   * The random session of a job that names none, the same however often the job is delivered
   * (`RequestSessions`: `proposed` at its first intake); `undefined` when the job is gone or
   * Redis stays away.
   */
  private async claimSession(job: Job, proposed: string): Promise<string | undefined> {
    try {
      return await retryTransient(() => this.options.sessions.claim(job.id ?? "", proposed));
    } catch (err) {
      this.options.log.warn(
        { requestId: job.id, err: (err as Error).message },
        "could not record the session of a request; it is delivered again after its lock",
      );
      return undefined;
    }
  }

  /**
   * Holds a request job of `sessionId` until the run that answers it stores its response.
   * Only a `HeldRequest` is kept: the input is recorded from `request` and then let go, so a
   * run parked for approval keeps no input in memory however long it waits.
   */
  private hold(
    job: Job,
    token: string,
    slot: Slot,
    sessionId: string,
    request: CoordinatorRequest,
    fresh: boolean,
  ): Promise<void> {
    const requestId = job.id ?? "";
    const order = inputOrder(job.timestamp);
    const held: HeldRequest = {
      token,
      sessionId,
      agent: request.agent ?? DEFAULT_AGENT,
      name: job.name,
      opts: job.opts,
      plainAttempts: plainAttemptsOf(job),
      parent: request.parent,
      phase: "recording",
      letGo: new AbortController(),
      ahead: undefined,
      busy: undefined,
    };
    this.held.set(requestId, held);
    this.options.locks.track(requestId, token);
    this.options.answers.watch(requestId, sessionId, this.onAnswer); // before the input is recorded
    const agent = fresh ? held.agent : undefined;
    held.busy = this.recordAndStart(requestId, held, { ...request, order }, slot, agent);
    return held.busy;
  }

  /**
   * Hands every held job back to the queue (for another coordinator), but lets those being
   * completed finish, and waits for all of them.
   */
  async close(): Promise<void> {
    const all = [...this.held];
    await Promise.all(
      all.map(async ([requestId, held]) => {
        if (held.phase !== "finishing") await this.handBack(requestId, held);
        await held.busy?.catch(() => undefined);
      }),
    );
  }

  /**
   * Records the input; then the job waits for its answer (the session's run started here, or
   * watched if another coordinator holds it), or completes at once when it was answered before
   * (a job delivered again), or fails when its id was used for another input. `freshAgent`:
   * the session was just made for this request, and this is its agent (`StartSent`).
   */
  private async recordAndStart(
    requestId: string,
    held: HeldRequest,
    request: OrderedRequest,
    slot: Slot,
    freshAgent?: string,
  ): Promise<void> {
    const { recorded, sent, tries } = await this.recordWithStart(
      requestId,
      held,
      request,
      slot,
      freshAgent,
    );
    held.letGo = undefined;
    const letGo = !recorded || this.held.get(requestId) !== held || held.phase !== "recording";
    // An input that starts no run here lets an early take go again.
    if (
      sent.kind === "take" &&
      (letGo || recorded?.kind === "reused" || recorded?.kind === "answered")
    )
      this.options.tasks.letGo(held.sessionId, sent.take);
    // A fresh session's task keeps the slot: it frees it when it ends, as any session's task.
    const release = () => (sent.kind === "task" ? undefined : slot.release());
    if (letGo || !recorded) return release();
    held.busy = undefined;
    if (recorded.kind === "reused") {
      release();
      this.forget(requestId, held);
      return this.refuse(
        jobOfHeld(this.options.worker, requestId, held),
        held.token,
        reusedJobId(requestId, held.sessionId),
      );
    }
    if (recorded.kind === "answered") {
      release();
      return this.finish(requestId, held, recorded.answer);
    }
    held.phase = "waiting";
    // A fresh session's task started with the first try of the record: when that try failed,
    // the task may have ended before the input landed, and another starts now.
    if (sent.kind === "task")
      return tries > 1 ? this.options.tasks.ensureRunning(held.sessionId) : undefined;
    await this.options.tasks.ensureRunning(
      held.sessionId,
      slot,
      sent.kind === "take" ? sent.take : undefined,
    );
  }

  /**
   * Records the input (`record`), sending what starts its session's run right behind its
   * first try (`startBehindRecord`); `recorded` is `undefined` when the job was let go while
   * recording (its lock lost, or closing); `tries`: the records sent.
   */
  private async recordWithStart(
    requestId: string,
    held: HeldRequest,
    request: OrderedRequest,
    slot: Slot,
    freshAgent: string | undefined,
  ): Promise<{ recorded: EnqueueOutcome | undefined; sent: StartSent; tries: number }> {
    let sent: StartSent = { kind: "none" };
    let tries = 0;
    const startBehind = () => {
      tries++;
      if (sent.kind === "none") sent = this.startBehindRecord(held.sessionId, slot, freshAgent);
    };
    try {
      const recorded = await this.record(requestId, held, request, startBehind);
      return { recorded, sent, tries };
    } catch {
      return { recorded: undefined, sent, tries };
    }
  }

  /**
   * What goes out right behind the input's first record (one round trip for all): a fresh
   * session's task (`SessionTasks.startFresh`: the lease's take and the run's opening), else
   * the take of the session's lease (`SessionTasks.takeEarly`), else nothing.
   */
  private startBehindRecord(sessionId: string, slot: Slot, freshAgent?: string): StartSent {
    const { tasks } = this.options;
    if (freshAgent !== undefined && tasks.startFresh(sessionId, slot, freshAgent))
      return { kind: "task" };
    const take = tasks.takeEarly(sessionId);
    return take ? { kind: "take", take } : { kind: "none" };
  }

  /**
   * Completes the held jobs of `requestIds` right behind their run's close, which the caller
   * has just sent on the connection they complete on (`SessionRunnerDeps.onRunCloseSent`):
   * each completes only if Redis stored `answer` (as `answerText`) as its response by then
   * (`completeJob`'s `onlyIf`), so a client told `completed` finds the answer stored, and is told a round trip
   * sooner than after the close's reply. Not for a job a feature takes the answer of first (a
   * child run's), one not plain, or any on a Redis Cluster (its response lives in another
   * slot): those, and one whose close was refused, complete once the answer is told, as
   * before. Never throws.
   */
  completeAhead(requestIds: readonly string[], answer: RunAnswer, answerText: string): void {
    if (this.options.keys.layout.cluster) return;
    let sha1: string | undefined;
    for (const requestId of requestIds) {
      const held = this.held.get(requestId);
      if (held?.phase !== "waiting" || !this.mayCompleteAhead(held)) continue;
      sha1 ??= createHash("sha1").update(answerText).digest("hex");
      held.phase = "finishing";
      held.ahead = { told: undefined };
      held.busy = this.tryAhead(requestId, held, answer, sha1);
    }
  }

  /** Whether a held job may complete behind its run's close: plain, and no feature takes its answer. */
  private mayCompleteAhead(held: HeldRequest): boolean {
    if (held.plainAttempts === undefined) return false;
    const request = { parent: held.parent };
    return this.options.features.every(
      ({ intake }) => !intake?.answered || intake.takesAnswer?.(request) === false,
    );
  }

  /**
   * The completion behind the close (`completeAhead`): done, or, when the answer was not
   * stored (the close refused) or Redis failed, the job waits again, and an answer told
   * meanwhile completes it the ordinary way.
   */
  private async tryAhead(
    requestId: string,
    held: HeldRequest,
    answer: RunAnswer,
    sha1: string,
  ): Promise<void> {
    const { sessionId, agent, token } = held;
    const job = jobOfHeld(this.options.worker, requestId, held);
    const result = buildCoordinatorJobResult(sessionId, requestId, agent, answer);
    const onlyIf = { key: this.options.keys.response(sessionId, requestId), sha1 };
    try {
      const options = { taken: true, onlyIf };
      const done = await completeJob(this.options.worker, job, token, result, options);
      if (done === "completed") return this.forget(requestId, held);
    } catch (err) {
      const context = { sessionId, requestId };
      if (classifyBullmqError(err, context) instanceof JobMovedOnError)
        return this.forget(requestId, held);
    }
    const told = held.ahead?.told;
    held.ahead = undefined;
    held.phase = "waiting";
    held.busy = undefined;
    if (told) this.answered(requestId, told);
  }

  /** A held job's answer is known: completes the job, unless it is completing already. */
  private answered(requestId: string, answer: RunAnswer): void {
    const held = this.held.get(requestId);
    if (held?.ahead) held.ahead.told = answer;
    if (!held || held.phase === "finishing") return;
    void this.finish(requestId, held, answer).catch((err: unknown) =>
      this.options.log.error(
        { requestId, sessionId: held.sessionId, err: (err as Error).message },
        "could not complete a coordinator job",
      ),
    );
  }

  /** Gives the answer to the parent call of a child run, then completes the job and forgets it. */
  private finish(requestId: string, held: HeldRequest, answer: RunAnswer): Promise<void> {
    held.phase = "finishing";
    this.options.answers.unwatch(requestId, this.onAnswer);
    const { sessionId, agent, parent } = held;
    const work = async () => {
      try {
        // Only the features that take answers are waited for: the job completes a step sooner.
        for (const { intake } of this.options.features)
          if (intake?.answered)
            await intake.answered({ sessionId, agent, request: { parent }, answer });
        await this.complete(
          requestId,
          held,
          buildCoordinatorJobResult(sessionId, requestId, agent, answer),
        );
      } finally {
        this.forget(requestId, held);
      }
    };
    held.busy = work();
    return held.busy;
  }

  /** Moves a held job back to the wait list, for whichever coordinator fetches it next. */
  private async handBack(requestId: string, held: HeldRequest): Promise<void> {
    this.forget(requestId, held);
    held.letGo?.abort(new Error("the coordinator is closing"));
    await jobOfHeld(this.options.worker, requestId, held)
      .moveToWait(held.token)
      .catch(() => undefined);
  }

  /** The lock of a held job was taken back: it is someone else's now. */
  private lockLost(requestId: string): void {
    const held = this.held.get(requestId);
    if (!held) return;
    this.forget(requestId, held);
    held.letGo?.abort(new Error("the job's lock was lost"));
  }

  /** Stops holding a job: its record, its lock and its answer's watch go. */
  private forget(requestId: string, held: HeldRequest): void {
    if (this.held.get(requestId) !== held) return;
    this.held.delete(requestId);
    this.options.locks.untrack(requestId);
    this.options.answers.unwatch(requestId, this.onAnswer);
  }

  /** The first feature's refusal of a job that does not belong on the coordinator queue. */
  private refusalOf(data: unknown): Error | undefined {
    for (const { intake } of this.options.features) {
      const refusal = intake?.refuses?.(data);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** The first feature's refusal of a valid request (`FeatureIntake.admits`). */
  private async refusalOfRequest(request: CoordinatorRequest): Promise<Error | undefined> {
    for (const { intake } of this.options.features) {
      const refusal = await intake?.admits?.(request);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** Tells every feature that a request was refused (a child run's parent still gets its answer). */
  private async tellRefused(data: unknown, reason: string): Promise<void> {
    for (const { intake } of this.options.features) await intake?.refused?.(data, reason);
  }

  /**
   * Records the input, retrying any error until it is recorded or the job is let go.
   * `sent` is called right after each attempt's record is sent (in the same pass of the event
   * loop, so what it sends goes out with it).
   */
  private async record(
    requestId: string,
    held: HeldRequest,
    request: OrderedRequest,
    sent: () => void,
  ): Promise<EnqueueOutcome> {
    const { store, log } = this.options;
    const { features } = this.options;
    const { sessionId } = held;
    return retryTransient(
      async () => {
        for (const { intake } of features) await intake?.beforeRecord?.(sessionId, request);
        const recorded = store.enqueueInput(
          sessionId,
          requestId,
          request.kind,
          request.message,
          request.order,
          request.budget,
        );
        sent();
        return recorded;
      },
      {
        attempts: Number.POSITIVE_INFINITY,
        retryIf: anyError,
        signal: held.letGo?.signal,
        onRetry: (err) =>
          log.warn(
            { sessionId, requestId, err: (err as Error).message },
            "could not record an input; retrying",
          ),
      },
    );
  }

  /** Completes the job with its answer, retrying any error while the job is still ours. */
  private async complete(
    requestId: string,
    held: HeldRequest,
    result: CoordinatorJobResult,
  ): Promise<void> {
    const { log } = this.options;
    const job = jobOfHeld(this.options.worker, requestId, held);
    const movedOn = (err: unknown) =>
      this.held.get(requestId) !== held ||
      classifyBullmqError(err, { sessionId: held.sessionId, requestId }) instanceof JobMovedOnError;
    try {
      await retryTransient(
        () =>
          completeJob(this.options.worker, job, held.token, result, {
            taken: held.plainAttempts !== undefined,
          }),
        {
          attempts: Number.POSITIVE_INFINITY,
          retryIf: (err) => !movedOn(err),
          onRetry: (err) =>
            log.warn(
              { requestId, err: (err as Error).message },
              "could not complete a coordinator job; retrying",
            ),
        },
      );
    } catch (err) {
      log.info(
        { requestId, err: (err as Error).message },
        "a coordinator job moved on before it could complete",
      );
    }
  }

  private async refuse(job: Job, token: string, err: unknown): Promise<void> {
    const reason = `invalid request: ${(err as Error).message}`;
    this.options.log.info({ requestId: job.id, reason }, "refused a coordinator job");
    await this.tellRefused(job.data, reason);
    await retryTransient(() => job.moveToFailed(new UnrecoverableError(reason), token, false), {
      attempts: REFUSE_ATTEMPTS,
      retryIf: anyError,
    }).catch(() => undefined);
  }
}
