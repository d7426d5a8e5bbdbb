import type { Redis } from "ioredis";
import type { ExecutedOutcome, ToolArgs } from "../types/index.js";
import type { ClusterKeys } from "./keys.js";
import { DECIDE_APPROVAL, PARK_RUN, REQUEST_APPROVAL } from "./sessionScripts.js";

/** A call awaiting a human decision, as recorded when its run parked. */
export interface ApprovalRequest {
  /** The call's key in its session (what `approve` / `deny` name). */
  callKey: string;
  toolCallId: string;
  toolName: string;
  arguments: ToolArgs;
  reason: string;
  runId: string;
  /** Epoch ms. */
  requestedAt: number;
  /** Epoch ms when it is denied on its own, if it has a timeout. */
  deadline?: number;
}

/** A decision on a call awaiting approval. `by` is free text (who decided). */
export interface ApprovalDecision {
  approved: boolean;
  by?: string;
  reason?: string;
  /** Epoch ms. */
  decidedAt: number;
}

/** A call awaiting approval, as `pending` lists it. */
export interface PendingApproval extends ApprovalRequest {
  sessionId: string;
}

/** What recording a decision did. */
export type DecideOutcome =
  | { kind: "recorded"; resume: boolean }
  | { kind: "notWaiting" }
  | { kind: "alreadyDecided"; decision: ApprovalDecision };

type Scripts = {
  yiemRequestApproval(...keysThenArgs: string[]): Promise<number>;
  yiemDecideApproval(...keysThenArgs: string[]): Promise<Array<number | string>>;
  yiemParkRun(...keysThenArgs: string[]): Promise<number>;
};

function defineScripts(redis: Redis): Redis & Scripts {
  const scripted = redis as Redis & Scripts;
  if (typeof scripted.yiemDecideApproval === "function") return scripted;
  redis.defineCommand("yiemRequestApproval", { numberOfKeys: 4, lua: REQUEST_APPROVAL });
  redis.defineCommand("yiemDecideApproval", { numberOfKeys: 5, lua: DECIDE_APPROVAL });
  redis.defineCommand("yiemParkRun", { numberOfKeys: 5, lua: PARK_RUN });
  return scripted;
}

/** The member naming one call in the cluster-wide sorted sets (session ids have no spaces). */
function memberOf(sessionId: string, callKey: string): string {
  return `${sessionId} ${callKey}`;
}

/** The session and call key of a sorted-set member. */
function parseMember(member: string): { sessionId: string; callKey: string } {
  const space = member.indexOf(" ");
  return { sessionId: member.slice(0, space), callKey: member.slice(space + 1) };
}

/**
 * The durable side of human approval: which calls of a session's parked batch await a
 * decision, the decisions taken, and the outcomes of the batch's other calls (so a resume
 * never runs them again). Requests and parking are fenced by the holder's lease; decisions
 * are recorded by any coordinator, each at most once (see `DECIDE_APPROVAL`).
 */
export class ApprovalStore {
  private readonly redis: Redis & Scripts;

  constructor(
    redis: Redis,
    private readonly keys: ClusterKeys,
  ) {
    this.redis = defineScripts(redis);
  }

  /** Records that a call awaits approval: "new", "known" (recorded before), or "lost" (not our lease). */
  async request(
    sessionId: string,
    token: string,
    request: ApprovalRequest,
  ): Promise<"new" | "known" | "lost"> {
    const k = this.keys;
    const code = await this.redis.yiemRequestApproval(
      k.lease(sessionId),
      k.approvals(sessionId),
      k.approvalsPending,
      k.approvalDeadlines,
      token,
      request.callKey,
      JSON.stringify(request),
      memberOf(sessionId, request.callKey),
      String(request.requestedAt),
      request.deadline === undefined ? "" : String(request.deadline),
    );
    return code === 1 ? "new" : code === 0 ? "known" : "lost";
  }

  /** The recorded request of a call awaiting (or decided on) approval, if any. */
  async requestOf(sessionId: string, callKey: string): Promise<ApprovalRequest | undefined> {
    const text = await this.redis.hget(this.keys.approvals(sessionId), callKey);
    return text ? (JSON.parse(text) as ApprovalRequest) : undefined;
  }

  /** The decision taken on a call, if any. */
  async decision(sessionId: string, callKey: string): Promise<ApprovalDecision | undefined> {
    const text = await this.redis.hget(this.keys.decisions(sessionId), callKey);
    return text ? (JSON.parse(text) as ApprovalDecision) : undefined;
  }

  /** The stored outcomes of the calls that finished in a batch that then parked, by call key. */
  async storedOutcomes(sessionId: string): Promise<Map<string, ExecutedOutcome>> {
    const stored = await this.redis.hgetall(this.keys.parkedResults(sessionId));
    return new Map(
      Object.entries(stored).map(([key, text]) => [key, JSON.parse(text) as ExecutedOutcome]),
    );
  }

  /**
   * Stores the finished calls' outcomes and parks the run, releasing the lease, unless every
   * waiting call was decided meanwhile ("decided": resume now). "lost" when not our lease.
   */
  async park(
    sessionId: string,
    token: string,
    outcomes: ReadonlyMap<string, ExecutedOutcome>,
  ): Promise<"parked" | "decided" | "lost"> {
    const k = this.keys;
    const pairs = [...outcomes].flatMap(([key, outcome]) => [key, JSON.stringify(outcome)]);
    const code = await this.redis.yiemParkRun(
      k.lease(sessionId),
      k.run(sessionId),
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.parkedResults(sessionId),
      token,
      ...pairs,
    );
    return code === 1 ? "parked" : code === 0 ? "decided" : "lost";
  }

  /** Records a decision at most once (see `DECIDE_APPROVAL`). */
  async decide(
    sessionId: string,
    callKey: string,
    decision: ApprovalDecision,
  ): Promise<DecideOutcome> {
    const k = this.keys;
    const [code, existing] = await this.redis.yiemDecideApproval(
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.run(sessionId),
      k.approvalsPending,
      k.approvalDeadlines,
      callKey,
      JSON.stringify(decision),
      memberOf(sessionId, callKey),
    );
    if (code === -1) return { kind: "notWaiting" };
    if (code === -2)
      return { kind: "alreadyDecided", decision: JSON.parse(String(existing)) as ApprovalDecision };
    return { kind: "recorded", resume: code === 2 };
  }

  /** Forgets the batch's approvals once its results are in the transcript. */
  async clear(sessionId: string): Promise<void> {
    const k = this.keys;
    await this.redis.del(
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.parkedResults(sessionId),
    );
  }

  /** Calls whose approval deadline has passed (at most `limit`). */
  async due(now: number, limit = 100): Promise<Array<{ sessionId: string; callKey: string }>> {
    const members = await this.redis.zrangebyscore(
      this.keys.approvalDeadlines,
      "-inf",
      now,
      "LIMIT",
      0,
      limit,
    );
    return members.map(parseMember);
  }

  /** Calls awaiting approval, oldest first: of one session, or of the whole cluster. */
  async pending(sessionId?: string): Promise<PendingApproval[]> {
    if (sessionId) return this.pendingIn(sessionId);
    const k = this.keys;
    const members = (await this.redis.zrange(k.approvalsPending, 0, -1)).map(parseMember);
    if (members.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const m of members) pipeline.hget(k.approvals(m.sessionId), m.callKey);
    const replies = (await pipeline.exec()) ?? [];
    return members.flatMap((m, i) => {
      const [err, text] = replies[i] ?? [];
      if (err) throw err;
      if (typeof text !== "string") return [];
      return [{ ...(JSON.parse(text) as ApprovalRequest), sessionId: m.sessionId }];
    });
  }

  /** One session's calls awaiting approval, read from the session itself (one round trip). */
  private async pendingIn(sessionId: string): Promise<PendingApproval[]> {
    const k = this.keys;
    const [requested, decided] = (
      (await this.redis
        .pipeline()
        .hvals(k.approvals(sessionId))
        .hkeys(k.decisions(sessionId))
        .exec()) ?? []
    ).map(([err, value]) => {
      if (err) throw err;
      return value as string[];
    });
    const done = new Set(decided ?? []);
    return (requested ?? [])
      .map((text) => ({ ...(JSON.parse(text) as ApprovalRequest), sessionId }))
      .filter((request) => !done.has(request.callKey))
      .sort((a, b) => a.requestedAt - b.requestedAt);
  }
}
