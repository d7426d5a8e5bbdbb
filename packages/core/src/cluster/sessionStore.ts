import type { Redis } from "ioredis";
import type { AgentEvent, AgentMessage, AssistantMessage, UserMessage } from "../types/index.js";
import { DEFAULT_STREAM_LENGTH } from "./eventBus.js";
import type { ClusterKeys } from "./keys.js";
import {
  ACQUIRE_LEASE,
  APPEND_MESSAGE,
  APPEND_MESSAGES,
  DRAIN_INPUTS,
  FINISH_RUN,
  RELEASE_IF_IDLE,
  RELEASE_LEASE,
  RENEW_LEASE,
  START_RUN,
} from "./sessionScripts.js";

/**
 * How long a session's transcript and events are kept after its last run (30 days); every
 * finished run pushes the expiry back.
 */
export const SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;

/** How long a stored response stays readable by `waitForResponse` (one day). */
export const RESPONSE_TTL_SECONDS = 24 * 60 * 60;

/** What `startRun` found: a run to resume, a new run, or nothing to do. */
export type RunStart =
  | { kind: "resume"; runId: string; inputIds: string[] }
  | { kind: "new"; runId: string; message: UserMessage }
  | { kind: "idle" }
  | { kind: "lost" };

type ScriptResult = Array<number | string>;
type Scripts = {
  yiemAcquire(
    lease: string,
    inbox: string,
    run: string,
    token: string,
    ms: number,
  ): Promise<number>;
  yiemRenew(lease: string, token: string, ms: number): Promise<number>;
  yiemReleaseIfIdle(lease: string, inbox: string, run: string, token: string): Promise<number>;
  yiemRelease(lease: string, token: string): Promise<number>;
  yiemStartRun(
    lease: string,
    inbox: string,
    run: string,
    messages: string,
    token: string,
  ): Promise<ScriptResult>;
  yiemDrain(
    lease: string,
    inbox: string,
    run: string,
    messages: string,
    token: string,
  ): Promise<ScriptResult>;
  yiemAppend(
    lease: string,
    messages: string,
    running: string,
    token: string,
    message: string,
    callId: string,
  ): Promise<number>;
  yiemAppendMany(
    lease: string,
    messages: string,
    running: string,
    token: string,
    ...pairs: string[]
  ): Promise<number>;
  yiemFinish(
    lease: string,
    run: string,
    seq: string,
    stream: string,
    messages: string,
    token: string,
    response: string,
    ttl: number,
    keyPrefix: string,
    channel: string,
    eventChannel: string,
    eventJson: string,
    maxLen: number,
    sessionTtl: number,
  ): Promise<number | string>;
};

function defineScripts(redis: Redis): Redis & Scripts {
  const scripted = redis as Redis & Scripts;
  if (typeof scripted.yiemAcquire === "function") return scripted;
  redis.defineCommand("yiemAcquire", { numberOfKeys: 3, lua: ACQUIRE_LEASE });
  redis.defineCommand("yiemRenew", { numberOfKeys: 1, lua: RENEW_LEASE });
  redis.defineCommand("yiemReleaseIfIdle", { numberOfKeys: 3, lua: RELEASE_IF_IDLE });
  redis.defineCommand("yiemRelease", { numberOfKeys: 1, lua: RELEASE_LEASE });
  redis.defineCommand("yiemStartRun", { numberOfKeys: 4, lua: START_RUN });
  redis.defineCommand("yiemDrain", { numberOfKeys: 4, lua: DRAIN_INPUTS });
  redis.defineCommand("yiemAppend", { numberOfKeys: 3, lua: APPEND_MESSAGE });
  redis.defineCommand("yiemAppendMany", { numberOfKeys: 3, lua: APPEND_MESSAGES });
  redis.defineCommand("yiemFinish", { numberOfKeys: 5, lua: FINISH_RUN });
  return scripted;
}

/** An inbox entry as `enqueueInput` writes it. */
export function encodeInboxEntry(
  kind: "input" | "followUp",
  inputId: string,
  message: UserMessage,
): string {
  return `${kind === "input" ? "i" : "f"}${inputId}\n${JSON.stringify(message)}`;
}

/**
 * A session's durable state in Redis: its transcript, its inbox of inputs, the run in
 * progress, and the lease that says which coordinator holds it. Every write made on behalf
 * of a holder is fenced by its lease token; a write with a stale token changes nothing and
 * is reported (`false`, `lost`, or `LeaseLost` from the caller's point of view).
 */
export class SessionStore {
  private readonly redis: Redis & Scripts;

  constructor(
    redis: Redis,
    private readonly keys: ClusterKeys,
  ) {
    this.redis = defineScripts(redis);
  }

  /** Takes the lease (or renews it when already ours). */
  async acquire(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    const k = this.keys;
    return (
      (await this.redis.yiemAcquire(
        k.lease(sessionId),
        k.inbox(sessionId),
        k.run(sessionId),
        token,
        leaseMs,
      )) === 1
    );
  }

  /** Extends the lease; false when it is no longer ours. */
  async renew(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.yiemRenew(this.keys.lease(sessionId), token, leaseMs)) === 1;
  }

  /** Releases the lease only when no input waits and no run is open: "released" | "busy" | "lost". */
  async releaseIfIdle(sessionId: string, token: string): Promise<"released" | "busy" | "lost"> {
    const k = this.keys;
    const result = await this.redis.yiemReleaseIfIdle(
      k.lease(sessionId),
      k.inbox(sessionId),
      k.run(sessionId),
      token,
    );
    return result === 1 ? "released" : result === 0 ? "busy" : "lost";
  }

  /** Releases the lease whatever is pending (a hand-over); the run stays open for the next holder. */
  async release(sessionId: string, token: string): Promise<void> {
    await this.redis.yiemRelease(this.keys.lease(sessionId), token);
  }

  /** True when the session has input waiting or a run open. */
  async hasPendingWork(sessionId: string): Promise<boolean> {
    const k = this.keys;
    const [inbox, run] = await Promise.all([
      this.redis.llen(k.inbox(sessionId)),
      this.redis.exists(k.run(sessionId)),
    ]);
    return inbox > 0 || run === 1;
  }

  /** Opens the next run from the inbox, or reports the run in progress. */
  async startRun(sessionId: string, token: string): Promise<RunStart> {
    const k = this.keys;
    const [code, id, payload] = await this.redis.yiemStartRun(
      k.lease(sessionId),
      k.inbox(sessionId),
      k.run(sessionId),
      k.messages(sessionId),
      token,
    );
    if (code === -1) return { kind: "lost" };
    if (code === 0) return { kind: "idle" };
    if (code === 2)
      return { kind: "resume", runId: String(id), inputIds: String(payload).split(",") };
    return { kind: "new", runId: String(id), message: JSON.parse(String(payload)) as UserMessage };
  }

  /** Moves waiting plain inputs into the transcript; `undefined` when the lease is lost. */
  async drainInputs(sessionId: string, token: string): Promise<UserMessage[] | undefined> {
    const k = this.keys;
    const [code, ...messages] = await this.redis.yiemDrain(
      k.lease(sessionId),
      k.inbox(sessionId),
      k.run(sessionId),
      k.messages(sessionId),
      token,
    );
    if (code === -1) return undefined;
    return messages.map((text) => JSON.parse(String(text)) as UserMessage);
  }

  /** Appends a message to the transcript (a tool result clears its running mark); false when the lease is lost. */
  async append(sessionId: string, token: string, message: AgentMessage): Promise<boolean> {
    const k = this.keys;
    const callId = message.role === "toolResult" ? message.toolCallId : "";
    const length = await this.redis.yiemAppend(
      k.lease(sessionId),
      k.messages(sessionId),
      k.running(sessionId),
      token,
      JSON.stringify(message),
      callId,
    );
    return length !== -1;
  }

  /** Appends several messages in order, in one round trip; false when the lease is lost. */
  async appendMany(sessionId: string, token: string, messages: AgentMessage[]): Promise<boolean> {
    if (messages.length === 0) return true;
    const k = this.keys;
    const pairs = messages.flatMap((m) => [
      JSON.stringify(m),
      m.role === "toolResult" ? m.toolCallId : "",
    ]);
    const length = await this.redis.yiemAppendMany(
      k.lease(sessionId),
      k.messages(sessionId),
      k.running(sessionId),
      token,
      ...pairs,
    );
    return length !== -1;
  }

  /** Marks a tool call as running in the holder's own process (so a successor knows it was interrupted). */
  async markRunning(sessionId: string, toolCallId: string): Promise<void> {
    await this.redis.hset(this.keys.running(sessionId), toolCallId, String(Date.now()));
  }

  /** The tool calls a previous holder was running in its process when it stopped. */
  async loadRunning(sessionId: string): Promise<string[]> {
    return this.redis.hkeys(this.keys.running(sessionId));
  }

  /**
   * Closes the run: stores its response for every input it answers and publishes its
   * `agentEnd` event, atomically (see FINISH_RUN). Returns the input ids, or undefined when
   * the lease is lost.
   */
  async finishRun(
    sessionId: string,
    token: string,
    response: AssistantMessage,
    agentEnd: { runId: string; event: AgentEvent },
  ): Promise<string[] | undefined> {
    const k = this.keys;
    const eventJson = JSON.stringify({
      ...agentEnd.event,
      sessionId,
      runId: agentEnd.runId,
      ts: Date.now(),
    });
    const ids = await this.redis.yiemFinish(
      k.lease(sessionId),
      k.run(sessionId),
      k.seq(sessionId),
      k.stream(sessionId),
      k.messages(sessionId),
      token,
      JSON.stringify(response),
      RESPONSE_TTL_SECONDS,
      k.response(""),
      k.responsesChannel,
      k.eventChannel(sessionId),
      eventJson,
      DEFAULT_STREAM_LENGTH,
      SESSION_TTL_SECONDS,
    );
    return ids === -1 ? undefined : String(ids).split(",").filter(Boolean);
  }

  /** The whole transcript. */
  async loadMessages(sessionId: string): Promise<AgentMessage[]> {
    const items = await this.redis.lrange(this.keys.messages(sessionId), 0, -1);
    return items.map((text) => JSON.parse(text) as AgentMessage);
  }

  /** Adds input to the inbox (not fenced: anyone may send). */
  async enqueueInput(sessionId: string, entry: string): Promise<void> {
    await this.redis.rpush(this.keys.inbox(sessionId), entry);
  }

  /** Takes back an inbox entry that was never announced (a send that failed half-way). */
  async withdrawInput(sessionId: string, entry: string): Promise<void> {
    await this.redis.lrem(this.keys.inbox(sessionId), 1, entry);
  }

  /** A stored response, if the run that answers `inputId` has ended. */
  async readResponse(inputId: string): Promise<AssistantMessage | undefined> {
    const text = await this.redis.get(this.keys.response(inputId));
    return text ? (JSON.parse(text) as AssistantMessage) : undefined;
  }
}
