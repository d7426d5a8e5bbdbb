import {
  DecideApprovalReply,
  ParkRunReply,
  RequestApprovalReply,
} from "../../redis/scriptReplies.js";
import { ScriptedStore } from "../../state/scriptedStore.js";
import { SESSION_TTL_SECONDS } from "../../state/sessionStore.js";
import type { ExecutedOutcome, ToolApprovalDecidedEvent } from "../../types/index.js";
import type { WaitingCallRecord } from "../waitingCallRecord.js";

/** A call awaiting a human decision, as recorded when its run parked (see `WaitingCallRecord`). */
export type ApprovalRequest = WaitingCallRecord;

/** A decision on a call awaiting approval. `by` is free text (who decided). */
export interface ApprovalDecision {
  approved: boolean;
  by?: string;
  reason?: string;
  /** Epoch ms. */
  decidedAt: number;
  /** A child run's answer, as the outcome of the call that waited for it. */
  outcome?: ExecutedOutcome;
}

/** One step of the way from a tree's root session to a call: a session, its agent, and the call there. */
export interface ChainLink {
  sessionId: string;
  agent?: string;
  callKey: string;
}

/** A call awaiting approval, as `pending` lists it. */
export interface PendingApproval extends ApprovalRequest {
  sessionId: string;
  /**
   * For a call in a child run (agents calling agents): the way to it from the root session,
   * root first: each session with its agent and the call that started the next child; the
   * last link is this call in its own session.
   */
  chain?: ChainLink[];
}

/** How many links a chain, and how many sessions a tree's listing, reads at most. */
const MAX_CHAIN = 64;
const MAX_TREE_SESSIONS = 1000;

/** What recording a decision did. */
export type DecideOutcome =
  | { kind: "recorded"; resume: boolean }
  | { kind: "notWaiting" }
  | { kind: "alreadyDecided"; decision: ApprovalDecision };

/** The bus event of a decision, as `publishEvent` would send it (without its number). */
function decidedEventJson(
  sessionId: string,
  request: ApprovalRequest,
  decision: ApprovalDecision,
): string {
  const event: ToolApprovalDecidedEvent = {
    type: "toolApprovalDecided",
    toolCallId: request.toolCallId,
    callKey: request.callKey,
    toolName: request.toolName,
    approved: decision.approved,
    ...(decision.by ? { by: decision.by } : {}),
    ...(decision.reason ? { reason: decision.reason } : {}),
    decidedAt: decision.decidedAt,
  };
  return JSON.stringify({ ...event, sessionId, runId: request.runId, ts: Date.now() });
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
 * are recorded by any coordinator, each at most once (see `decideApproval-4.lua`).
 */
export class ApprovalStore extends ScriptedStore {
  /**
   * Records that a call awaits approval: "new", "known" (recorded before), or "lost" (not our
   * lease). The cluster-wide index and the deadline are written first, in their own slots: a
   * crash in between leaves an entry without a request, which readers skip and the sweep
   * removes, never a request missing from them. The tree's index on its root session is
   * written once the request is recorded under the lease (`listInTree`): a holder woken past
   * its lease writes none, where it wrote one after the new holder's call was decided and
   * dropped from both indexes, left in the tree's for good (found by the chaos soak). A crash
   * before that write leaves the waiting call out of its tree's index until the run is
   * resumed (and requests it again) or the sweep lists it.
   */
  async request(
    sessionId: string,
    token: string,
    request: ApprovalRequest,
  ): Promise<"new" | "known" | "lost"> {
    const k = this.keys;
    const member = memberOf(sessionId, request.callKey);
    await this.redis.zadd(k.approvalsPending, "NX", request.requestedAt, member);
    if (request.deadline !== undefined) {
      await this.redis.zadd(k.approvalDeadlines, "NX", request.deadline, member);
    }
    const code = await this.redis.yiemRequestApproval(
      k.lease(sessionId),
      k.approvals(sessionId),
      token,
      request.callKey,
      JSON.stringify(request),
    );
    if (code !== RequestApprovalReply.recordedNow && code !== RequestApprovalReply.alreadyKnown)
      return "lost";
    await this.listInTree({ sessionId, callKey: request.callKey }, request.requestedAt);
    return code === RequestApprovalReply.recordedNow ? "new" : "known";
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
    if (code === ParkRunReply.parkedAndReleased) return "parked";
    return code === ParkRunReply.allDecided ? "decided" : "lost";
  }

  /**
   * Records a decision at most once and publishes its `toolApprovalDecided` event in the same
   * step (see `decideApproval-4.lua`), then drops the call from the cluster-wide index and its
   * tree's whatever the outcome (it no longer waits). `known`: the call's request when the caller has it.
   */
  async decide(
    sessionId: string,
    callKey: string,
    decision: ApprovalDecision,
    known?: ApprovalRequest,
  ): Promise<DecideOutcome> {
    const k = this.keys;
    const request = known ?? (await this.requestOf(sessionId, callKey));
    const [code, existing] = await this.redis.yiemDecideApproval(
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.run(sessionId),
      k.stream(sessionId),
      callKey,
      JSON.stringify(decision),
      request ? decidedEventJson(sessionId, request, decision) : "",
      k.eventChannel(sessionId),
      this.caps.maxLength,
      this.caps.maxBytes,
    );
    await this.unindex(sessionId, [memberOf(sessionId, callKey)]);
    if (code === DecideApprovalReply.notWaiting) return { kind: "notWaiting" };
    if (code === DecideApprovalReply.decidedAlready)
      return { kind: "alreadyDecided", decision: JSON.parse(String(existing)) as ApprovalDecision };
    return { kind: "recorded", resume: code === DecideApprovalReply.recordedMayResume };
  }

  /**
   * Forgets the batch's approvals once its results are in the transcript, and drops its calls
   * from the cluster-wide index and its tree's: a call answered without a decision (its run aborted while it
   * waited) would otherwise stay in the index for good. The session's keys go first, so a
   * crash in between leaves index entries without a request (skipped by readers), never a
   * request of an answered call. Only the session's holder (`token`) forgets: a coordinator
   * that lost the lease changes nothing (`forgetApprovals-4.lua`), so it cannot delete what
   * the next holder's batch has recorded since. Returns whether it forgot.
   */
  async clear(sessionId: string, token: string): Promise<boolean> {
    const k = this.keys;
    const forgotten = await this.redis.yiemForgetApprovals(
      k.lease(sessionId),
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.parkedResults(sessionId),
      token,
    );
    if (!Array.isArray(forgotten)) return false;
    const callKeys = forgotten.map(String);
    if (callKeys.length === 0) return true;
    await this.unindex(
      sessionId,
      callKeys.map((callKey) => memberOf(sessionId, callKey)),
    );
    return true;
  }

  /**
   * Drops `members` (calls of `sessionId`) from its tree's index, then from the cluster-wide
   * ones. A removal cut short (its process killed between the two, its connection dropped)
   * leaves the cluster-wide entry, which the sweep (`dropOrphanEntries`) finds and drops from
   * the tree's index too; never a tree entry alone, which no sweep reads (found by the chaos
   * soak: the three removals went out together, the tree's last, behind a read of the root).
   */
  private async unindex(sessionId: string, members: string[]): Promise<void> {
    const k = this.keys;
    await this.redis.zrem(k.treeApprovals(await this.rootOf(sessionId)), ...members);
    await Promise.all([
      this.redis.zrem(k.approvalsPending, ...members),
      this.redis.zrem(k.approvalDeadlines, ...members),
    ]);
  }

  /**
   * Drops entries of the cluster-wide index whose call has no request in its session: a
   * coordinator woken past its lease writes the entry of a call it then cannot record (the
   * index, in another slot, is written before the fenced request). Reads one page of `limit`
   * entries requested before `before` (older than any holder can still be between the two
   * writes), from `from` on; returns where the next page starts (0 once the index is read to
   * its end) and how many it dropped, from its tree's index too. Never drops an entry whose
   * request exists. An entry
   * whose call still waits is added to its tree's index when missing (a call recorded by a
   * version without that index), so every waiting call is listed there after one pass.
   */
  async dropOrphanEntries(
    from: number,
    before: number,
    limit = 200,
  ): Promise<{ next: number; dropped: number }> {
    const k = this.keys;
    const members = await this.redis.zrangebyscore(
      k.approvalsPending,
      "-inf",
      before,
      "LIMIT",
      from,
      limit,
    );
    const known = await Promise.all(
      members.map((member) => {
        const { sessionId, callKey } = parseMember(member);
        return this.redis.hexists(k.approvals(sessionId), callKey);
      }),
    );
    const orphans = members.filter((_, i) => known[i] === 0);
    await this.indexKnownInTrees(members.filter((_, i) => known[i] === 1));
    await Promise.all(
      orphans.map((member) => this.unindex(parseMember(member).sessionId, [member])),
    );
    const next = members.length < limit ? 0 : from + members.length - orphans.length;
    return { next, dropped: orphans.length };
  }

  /** Adds undecided calls of the cluster-wide index that their tree's index lacks to it. */
  private async indexKnownInTrees(members: string[]): Promise<void> {
    await Promise.all(
      members.map(async (member) => {
        const call = parseMember(member);
        const request = await this.undecidedRequest(call);
        if (request) await this.listInTree(call, request.requestedAt);
      }),
    );
  }

  /**
   * Lists a waiting call in its tree's index, then reads whether it still waits and takes the
   * entry back when not: a decision or a forgetting that came between the read that found it
   * waiting and this write already dropped the call from the indexes (`unindex`), and the
   * write would have left it in the tree's alone. One that comes after the read drops it
   * itself.
   */
  private async listInTree(
    call: { sessionId: string; callKey: string },
    requestedAt: number,
  ): Promise<void> {
    const root = await this.rootOf(call.sessionId);
    const member = memberOf(call.sessionId, call.callKey);
    await this.indexInTree(root, requestedAt, member);
    if (await this.undecidedRequest(call)) return;
    await this.redis.zrem(this.keys.treeApprovals(root), member);
  }

  /** Writes a call into its tree's index (on the root session), kept as long as a session. */
  private async indexInTree(root: string, requestedAt: number, member: string): Promise<void> {
    const key = this.keys.treeApprovals(root);
    const replies = await this.redis
      .multi()
      .zadd(key, "NX", requestedAt, member)
      .expire(key, SESSION_TTL_SECONDS)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }

  /** The root session of `sessionId`'s tree (its recorded parent call's root; itself for a root). */
  private async rootOf(sessionId: string): Promise<string> {
    const text = await this.redis.get(this.keys.sessionParent(sessionId));
    return text ? (JSON.parse(text) as { rootSessionId: string }).rootSessionId : sessionId;
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

  /**
   * Calls awaiting approval, oldest first: of one session and the child runs under it, or of
   * the whole cluster. A call in a child run carries its `chain` from the root session.
   */
  async pending(sessionId?: string): Promise<PendingApproval[]> {
    const listed = sessionId ? await this.pendingInTree(sessionId) : await this.pendingAll();
    return this.withChains(listed);
  }

  /**
   * The calls awaiting approval in the trees of the root sessions `roots` (each root's and its
   * child runs'), oldest first, each in a child run with its `chain`: read from each root's
   * index of its tree, so it costs one read per root and per call listed, whatever else waits
   * in the cluster. A session that is not a root lists nothing here.
   */
  async pendingUnder(roots: readonly string[]): Promise<PendingApproval[]> {
    const indexes = await Promise.all(
      roots.map((root) => this.redis.zrange(this.keys.treeApprovals(root), 0, -1)),
    );
    const listed = await this.undecidedOf(indexes.flat().map(parseMember));
    return this.withChains(listed.sort((a, b) => a.requestedAt - b.requestedAt));
  }

  /** The undecided requests of `members` (one read per call, sent at once), in their order. */
  private async undecidedOf(
    members: Array<{ sessionId: string; callKey: string }>,
  ): Promise<PendingApproval[]> {
    const requests = await Promise.all(members.map((m) => this.undecidedRequest(m)));
    return requests.flatMap((request, i) =>
      request ? [{ ...request, sessionId: members[i]?.sessionId ?? "" }] : [],
    );
  }

  /** Every call awaiting approval in the cluster (the index), oldest first. */
  private async pendingAll(): Promise<PendingApproval[]> {
    const members = (await this.redis.zrange(this.keys.approvalsPending, 0, -1)).map(parseMember);
    // Sessions live in different slots; an index entry whose call is decided or unknown is skipped.
    return this.undecidedOf(members);
  }

  /** The calls awaiting approval in a session and in its running child runs, oldest first. */
  private async pendingInTree(sessionId: string): Promise<PendingApproval[]> {
    const found: PendingApproval[] = [];
    const queue = [sessionId];
    for (let read = 0; queue.length > 0 && read < MAX_TREE_SESSIONS; read++) {
      const next = queue.shift() as string;
      found.push(...(await this.pendingIn(next)));
      const children = await this.redis.hvals(this.keys.children(next));
      for (const text of children) {
        const child = JSON.parse(text) as { sessionId: string; status: string };
        if (child.status === "running") queue.push(child.sessionId);
      }
    }
    return found.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** The calls with the chain of each one in a child run. */
  private async withChains(pending: PendingApproval[]): Promise<PendingApproval[]> {
    const chains = new Map<string, Promise<ChainLink[]>>();
    for (const { sessionId } of pending)
      if (!chains.has(sessionId)) chains.set(sessionId, this.chainTo(sessionId));
    return Promise.all(
      pending.map(async (request) => {
        const chain = await chains.get(request.sessionId);
        if (!chain || chain.length === 0) return request;
        const agent = await this.redis.get(this.keys.sessionAgent(request.sessionId));
        const last: ChainLink = {
          sessionId: request.sessionId,
          ...(agent ? { agent } : {}),
          callKey: request.callKey,
        };
        return { ...request, chain: [...chain, last] };
      }),
    );
  }

  /** The links from the root down to the call that started `sessionId` (none for a root). */
  private async chainTo(sessionId: string): Promise<ChainLink[]> {
    const links: ChainLink[] = [];
    let current = sessionId;
    for (let i = 0; i < MAX_CHAIN; i++) {
      const text = await this.redis.get(this.keys.sessionParent(current));
      if (!text) break;
      const parent = JSON.parse(text) as { sessionId: string; callKey: string };
      const agent = await this.redis.get(this.keys.sessionAgent(parent.sessionId));
      links.unshift({
        sessionId: parent.sessionId,
        ...(agent ? { agent } : {}),
        callKey: parent.callKey,
      });
      current = parent.sessionId;
    }
    return links;
  }

  /** The request of a call that still awaits its decision, if it does. */
  private async undecidedRequest(member: {
    sessionId: string;
    callKey: string;
  }): Promise<ApprovalRequest | undefined> {
    const k = this.keys;
    const [text, decided] = await Promise.all([
      this.redis.hget(k.approvals(member.sessionId), member.callKey),
      this.redis.hexists(k.decisions(member.sessionId), member.callKey),
    ]);
    const request = text && decided === 0 ? (JSON.parse(text) as ApprovalRequest) : undefined;
    return request?.child ? undefined : request;
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
      .filter((request) => !done.has(request.callKey) && !request.child)
      .sort((a, b) => a.requestedAt - b.requestedAt);
  }
}
