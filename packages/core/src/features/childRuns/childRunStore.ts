import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import {
  AbortChildRunReply,
  DecideApprovalReply,
  RequestApprovalReply,
} from "../../redis/scriptReplies.js";
import { ScriptedStore } from "../../state/scriptedStore.js";
import { SESSION_TTL_SECONDS } from "../../state/sessionStore.js";
import type { ExecutedOutcome, RunUsage } from "../../types/index.js";
import type { WaitingCallRecord } from "../waitingCallRecord.js";
import type { ChildRun, ChildStatus, ParentCall } from "./protocol.js";

/** A call waiting for a child run, as its parent records it (an `WaitingCallRecord` with `child`). */
export type ChildCallRequest = WaitingCallRecord & { child: { agent: string; sessionId: string } };

/** What delivering a child's answer to its parent did. */
export type DeliverOutcome =
  | { kind: "recorded"; resume: boolean }
  | { kind: "known" }
  | { kind: "notWaiting" };

/**
 * The durable side of agents calling agents. A call of `agent__<name>` waits like a call
 * awaiting approval: it is recorded in the parent's `approvals` hash (with `child`, the
 * child's session; never in the cluster-wide index of pending approvals), its batch parks when
 * it ends, and the child's answer is recorded as the call's decision (`decideApproval-4.lua`:
 * at most once; the last one un-parks the run). The tree is kept beside: each session's
 * children (`children` hash) and each child's parent call (`sessionParent`).
 */
export class ChildRunStore extends ScriptedStore {
  /**
   * Aborts a child session's run for its aborted tree, durably, whether or not the run has
   * opened (`abortChildRun-3.lua`): an open run is marked aborted; with none open, the next
   * run opens aborted (`startRun-9.lua` takes the mark), so a child whose request no
   * coordinator has taken in yet ends aborted before its first model call. One script in the
   * child's slot: a run opens either before it or after it. Not fenced: any coordinator may.
   * Returns what it did: `marked` (a run was open) or `markedForStart`.
   */
  async abortChildRun(sessionId: string): Promise<"marked" | "markedForStart"> {
    const k = this.keys;
    const reply = await this.redis.yiemAbortChildRun(
      k.run(sessionId),
      k.abortRequested(sessionId),
      k.abortOnStart(sessionId),
      SESSION_TTL_SECONDS,
    );
    return reply === AbortChildRunReply.marked ? "marked" : "markedForStart";
  }

  /**
   * Records that the parent's call waits for a child run, once, and lists the child in the
   * parent's tree: returns the request as recorded (a resumed batch finds the first one, with
   * its child session), or "lost" when the lease is not ours.
   */
  async request(
    sessionId: string,
    token: string,
    request: ChildCallRequest,
  ): Promise<ChildCallRequest | "lost"> {
    const k = this.keys;
    const code = await this.redis.yiemRequestApproval(
      k.lease(sessionId),
      k.approvals(sessionId),
      token,
      request.callKey,
      JSON.stringify(request),
    );
    if (code === RequestApprovalReply.notOurs) return "lost";
    let recorded = request;
    if (code === RequestApprovalReply.alreadyKnown) {
      const text = await this.redis.hget(k.approvals(sessionId), request.callKey);
      const known = text ? (JSON.parse(text) as WaitingCallRecord) : undefined;
      if (known?.child) recorded = known as ChildCallRequest;
    }
    await this.listChild(sessionId, recorded);
    return recorded;
  }

  /**
   * Lists the child of `request` in the parent's tree, once (the first entry of a call stays),
   * with the tree's expiry in the same step. A resumed batch lists it again: its holder may
   * have stopped between recording the request and listing the child.
   */
  private async listChild(sessionId: string, request: ChildCallRequest): Promise<void> {
    const child: ChildRun = {
      callKey: request.callKey,
      agent: request.child.agent,
      sessionId: request.child.sessionId,
      status: "running",
      startedAt: request.requestedAt,
    };
    const key = this.keys.children(sessionId);
    const replies = await this.redis
      .multi()
      .hsetnx(key, request.callKey, JSON.stringify(child))
      .expire(key, SESSION_TTL_SECONDS)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }

  /**
   * Records a child's answer as the outcome of the parent's call waiting for it: at most once,
   * and only when that call waits for exactly this child session (a job naming a parent it
   * does not answer changes nothing). Updates the child's entry in the parent's tree.
   * `resume`: no call of the parent's batch waits any more, so the parent may resume.
   */
  async deliver(
    parent: ParentCall,
    childSessionId: string,
    outcome: ExecutedOutcome,
    ended: { status: ChildStatus; usage?: RunUsage },
  ): Promise<DeliverOutcome> {
    const k = this.keys;
    const { sessionId, callKey } = parent;
    await this.markEnded(sessionId, callKey, childSessionId, ended);
    const text = await this.redis.hget(k.approvals(sessionId), callKey);
    const request = text ? (JSON.parse(text) as WaitingCallRecord) : undefined;
    if (request?.child?.sessionId !== childSessionId) return { kind: "notWaiting" };
    const by = `agent ${request.child.agent}`;
    const decision = { approved: true, by, decidedAt: Date.now(), outcome };
    const [code] = await this.redis.yiemDecideApproval(
      k.approvals(sessionId),
      k.decisions(sessionId),
      k.run(sessionId),
      k.stream(sessionId),
      callKey,
      JSON.stringify(decision),
      "",
      k.eventChannel(sessionId),
      this.caps.maxLength,
      this.caps.maxBytes,
    );
    if (code === DecideApprovalReply.notWaiting) return { kind: "notWaiting" };
    if (code === DecideApprovalReply.decidedAlready) return { kind: "known" };
    return { kind: "recorded", resume: code === DecideApprovalReply.recordedMayResume };
  }

  /**
   * Marks the child `childSessionId` ended in its parent's tree (its status, usage and end
   * time), once: an entry of another session, or one that ended already, is left as it is.
   */
  async markEnded(
    sessionId: string,
    callKey: string,
    childSessionId: string,
    ended: { status: ChildStatus; usage?: RunUsage },
  ): Promise<void> {
    const key = this.keys.children(sessionId);
    const text = await this.redis.hget(key, callKey);
    if (!text) return;
    const child = JSON.parse(text) as ChildRun;
    if (child.status !== "running" || child.sessionId !== childSessionId) return;
    const updated: ChildRun = { ...child, ...ended, endedAt: Date.now() };
    await this.redis.hset(key, callKey, JSON.stringify(updated));
  }

  /** The calls of the session's parked batch that wait for a child run. */
  async waiting(sessionId: string): Promise<ChildCallRequest[]> {
    const k = this.keys;
    const [requests, decided] = await Promise.all([
      this.redis.hvals(k.approvals(sessionId)),
      this.redis.hkeys(k.decisions(sessionId)),
    ]);
    const done = new Set(decided);
    return requests
      .map((text) => JSON.parse(text) as WaitingCallRecord)
      .filter((r): r is ChildCallRequest => r.child !== undefined && !done.has(r.callKey));
  }

  /**
   * Why a child run's request does not answer the call it names (`parent`), or `undefined`
   * when it does: a parent is proved, never claimed. The child session's recorded parent call
   * (proved at its first intake) must be this one; without one, the parent session must record
   * the call `parent.callKey` as waiting for exactly this child session and `agent`, and the
   * request's root, depth and way down must be what the parent's own place gives (its root's,
   * one deeper). Reads the child's slot, then the parent's (one round trip each: they are in
   * different slots on a Redis Cluster); never writes. Throws when Redis fails.
   */
  async disproveParent(
    childSessionId: string,
    agent: string | undefined,
    parent: ParentCall,
  ): Promise<string | undefined> {
    const k = this.keys;
    const known = await this.readParent(childSessionId);
    if (known) {
      const same = known.sessionId === parent.sessionId && known.callKey === parent.callKey;
      return same ? undefined : `session ${childSessionId} answers another call`;
    }
    const replies = await this.redis
      .multi()
      .hget(k.approvals(parent.sessionId), parent.callKey)
      .hget(k.children(parent.sessionId), parent.callKey)
      .get(k.sessionParent(parent.sessionId))
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
    const [callText, listedText, placeText] = (replies ?? []).map(
      ([, value]) => value as string | null,
    );
    // The call's record while it waits; once its batch is closed (the parent aborted before
    // the child was taken in), the parent's tree still lists the child its call started.
    const child = callText
      ? (JSON.parse(callText) as WaitingCallRecord).child
      : listedText
        ? (JSON.parse(listedText) as ChildRun)
        : undefined;
    if (child?.sessionId !== childSessionId)
      return `session ${parent.sessionId} has no call ${JSON.stringify(parent.callKey)} waiting for session ${childSessionId}`;
    if (agent !== child.agent) return `the call waits for agent "${child.agent}"`;
    const above = placeText ? (JSON.parse(placeText) as ParentCall) : undefined;
    const called = { agent: child.agent, sessionId: child.sessionId };
    return misplaced(parent, expectedPlace(parent, above, { ...called, childSessionId }));
  }

  /** Records the parent call of a child session (first intake wins; kept as long as the session). */
  async writeParent(childSessionId: string, parent: ParentCall): Promise<void> {
    const key = this.keys.sessionParent(childSessionId);
    await this.redis.set(key, JSON.stringify(parent), "EX", SESSION_TTL_SECONDS, "NX");
  }

  /** The parent call of a child session; `undefined` for a root session. */
  async readParent(sessionId: string): Promise<ParentCall | undefined> {
    const text = await this.redis.get(this.keys.sessionParent(sessionId));
    return text ? (JSON.parse(text) as ParentCall) : undefined;
  }

  /** The session's child runs, oldest first. */
  async children(sessionId: string): Promise<ChildRun[]> {
    return readChildren(this.redis, this.keys, sessionId);
  }
}

/** The child runs of a session, oldest first (what `YiemClient.children` reads too). */
export async function readChildren(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
): Promise<ChildRun[]> {
  const entries = await redis.hvals(keys.children(sessionId));
  return entries
    .map((text) => JSON.parse(text) as ChildRun)
    .sort((a, b) => a.startedAt - b.startedAt);
}

/** Where a child of the parent call `parent` stands, from the parent's own place (`above`). */
function expectedPlace(
  parent: ParentCall,
  above: ParentCall | undefined,
  child: { agent: string; childSessionId: string },
): Omit<ParentCall, "sessionId" | "callKey"> {
  const link = { agent: child.agent, sessionId: child.childSessionId, callKey: parent.callKey };
  return {
    rootSessionId: above?.rootSessionId ?? parent.sessionId,
    depth: (above?.depth ?? 0) + 1,
    path: [...(above?.path ?? []), link],
  };
}

/** Why `parent`'s root, depth or way down is not `expected`; a request without a way down has none to check. */
function misplaced(
  parent: ParentCall,
  expected: Omit<ParentCall, "sessionId" | "callKey">,
): string | undefined {
  if (parent.rootSessionId !== expected.rootSessionId)
    return `the call's root session is ${expected.rootSessionId}`;
  if (parent.depth !== expected.depth) return `the call's depth is ${expected.depth}`;
  if (parent.path && JSON.stringify(parent.path) !== JSON.stringify(expected.path))
    return "the way down from the root is not the call's";
  return undefined;
}
