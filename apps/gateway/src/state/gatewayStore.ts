import type { ClusterKeys, RedisClient } from "@yiem/core";
import { eventTextsOf, latestSeq } from "@yiem/core";

/** How long a session's owner is kept after its last run: as long as its transcript (30 days). */
const OWNER_TTL_S = 30 * 24 * 3600;

/** How long a run's record and an idempotency key are kept: a day. */
const RECORD_TTL_S = 24 * 3600;

/** How long an event-stream token lives from when it was made (never renewed): an hour. */
const STREAM_TOKEN_TTL_S = 3600;

/**
 * What an event-stream token stands for: the key that made it (its name and hash: the token
 * works only while that name is served with that hash) and the one session it opens.
 */
export interface StreamTokenRecord {
  keyName: string;
  keyHash: string;
  sessionId: string;
}

/**
 * A run submitted through a gateway: its session, the key that submitted it, and (from this
 * version on) where its events start, when it was submitted and its agent, so any gateway can
 * rebuild what the run did from the session's stored events (the Open Responses face).
 */
export interface RunRecord {
  sessionId: string;
  owner: string;
  /** The number of the session's latest stored event when the run was queued. */
  afterSeq?: number;
  /** When the run was submitted (epoch ms). */
  createdAt?: number;
  /** The agent the run was sent to. */
  agent?: string;
}

/** What an `Idempotency-Key` stands for: the request's digest and the run it made. */
export interface IdempotencyRecord {
  digest: string;
  runId: string;
  sessionId: string;
}

/**
 * The gateway's state, all in Redis (so any gateway answers any request, and a restart loses
 * nothing): which key owns each session, the sessions of each key by last activity, the
 * runs submitted, and the idempotency keys.
 */
export class GatewayStore {
  constructor(
    readonly redis: RedisClient,
    readonly keys: ClusterKeys,
  ) {}

  /**
   * Makes `owner` the owner of `sessionId` unless another key owns it: `claimed` (it had no
   * owner), `owned` (it is `owner`'s already), or `taken` (another key's).
   */
  async claimSession(sessionId: string, owner: string): Promise<"claimed" | "owned" | "taken"> {
    const key = this.keys.sessionOwner(sessionId);
    const before = await this.redis.set(key, owner, "EX", OWNER_TTL_S, "NX", "GET");
    if (before === null) return "claimed";
    if (before !== owner) return "taken";
    await this.redis.expire(key, OWNER_TTL_S);
    return "owned";
  }

  /**
   * The key that owns `sessionId`, if a gateway key started it or the root of its tree: a
   * child run's session (agents calling agents) is owned by its root's owner, whatever its own
   * record says (ownership follows the run).
   */
  async ownerOf(sessionId: string): Promise<string | undefined> {
    const root = await this.rootOf(sessionId);
    return (await this.redis.get(this.keys.sessionOwner(root))) ?? undefined;
  }

  /**
   * The root session of `sessionId`'s tree: its parent call's root for a child run's session
   * (recorded when the child's request was taken in), else `sessionId` itself. Never follows a
   * record it cannot read (the session is then its own root).
   */
  async rootOf(sessionId: string): Promise<string> {
    const text = await this.redis.get(this.keys.sessionParent(sessionId));
    if (!text) return sessionId;
    try {
      const root = (JSON.parse(text) as { rootSessionId?: unknown }).rootSessionId;
      return typeof root === "string" && root !== "" ? root : sessionId;
    } catch {
      return sessionId;
    }
  }

  /** Whether the session's open run is parked (waiting for approvals or child runs). */
  async isParked(sessionId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.run(sessionId), "parked")) !== null;
  }

  /** The id of the session's open (or last) run, if it has had one. */
  async openRunOf(sessionId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.run(sessionId), "runId")) ?? undefined;
  }

  /** The owners of `sessionIds` (as `ownerOf`), in their order. */
  async ownersOf(sessionIds: string[]): Promise<Array<string | undefined>> {
    return Promise.all(sessionIds.map((id) => this.ownerOf(id)));
  }

  /**
   * Records activity in `sessionId` now: it moves to the front of its owner's list and of the
   * list of all; sessions idle longer than a session lives (30 days) leave both lists.
   */
  async touchSession(sessionId: string, owner: string, now = Date.now()): Promise<void> {
    const forgotten = now - OWNER_TTL_S * 1000;
    await Promise.all(
      [this.keys.ownedSessions(owner), this.keys.gatewaySessions].map((key) =>
        this.redis
          .multi()
          .zadd(key, now, sessionId)
          .zremrangebyscore(key, "-inf", forgotten)
          .exec(),
      ),
    );
  }

  /**
   * Up to `limit` sessions by last activity, newest first, with their activity time: of
   * `owner`, or of every key (`undefined`); only those active before `before` when given.
   */
  async listSessions(
    owner: string | undefined,
    limit: number,
    before?: number,
  ): Promise<Array<{ sessionId: string; lastActivity: number }>> {
    const key = owner === undefined ? this.keys.gatewaySessions : this.keys.ownedSessions(owner);
    const max = before === undefined ? "+inf" : `(${before}`;
    const flat = await this.redis.zrevrangebyscore(
      key,
      max,
      "-inf",
      "WITHSCORES",
      "LIMIT",
      0,
      limit,
    );
    const sessions: Array<{ sessionId: string; lastActivity: number }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      sessions.push({ sessionId: flat[i] as string, lastActivity: Number(flat[i + 1]) });
    }
    return sessions;
  }

  /** Every session `owner` started that is still listed (active within a session's life). */
  async ownedSessionIds(owner: string): Promise<string[]> {
    return this.redis.zrange(this.keys.ownedSessions(owner), 0, -1);
  }

  /** Records run `runId` (kept a day). */
  async recordRun(runId: string, record: RunRecord): Promise<void> {
    await this.redis.set(this.keys.gatewayRun(runId), JSON.stringify(record), "EX", RECORD_TTL_S);
  }

  /** Forgets the record of run `runId` (its request was never queued). */
  async forgetRun(runId: string): Promise<void> {
    await this.redis.del(this.keys.gatewayRun(runId));
  }

  /** The record of run `runId`, if a gateway submitted it (within a day). */
  async readRun(runId: string): Promise<RunRecord | undefined> {
    const text = await this.redis.get(this.keys.gatewayRun(runId));
    return text ? (JSON.parse(text) as RunRecord) : undefined;
  }

  /**
   * Stores `record` for `idempotencyKey` of key `keyName` unless one is stored already, which
   * is returned instead (kept a day).
   */
  async reserveIdempotencyKey(
    keyName: string,
    idempotencyKey: string,
    record: IdempotencyRecord,
  ): Promise<IdempotencyRecord | undefined> {
    const key = this.keys.idempotency(keyName, idempotencyKey);
    const before = await this.redis.set(
      key,
      JSON.stringify(record),
      "EX",
      RECORD_TTL_S,
      "NX",
      "GET",
    );
    return before === null ? undefined : (JSON.parse(before) as IdempotencyRecord);
  }

  /** The record of `idempotencyKey` of key `keyName`, if one is stored (within a day). */
  async readIdempotencyKey(
    keyName: string,
    idempotencyKey: string,
  ): Promise<IdempotencyRecord | undefined> {
    const text = await this.redis.get(this.keys.idempotency(keyName, idempotencyKey));
    return text ? (JSON.parse(text) as IdempotencyRecord) : undefined;
  }

  /** Stores an event-stream token by its hash (kept `STREAM_TOKEN_TTL_S`); returns its lifetime in seconds. */
  async saveStreamToken(tokenHash: string, record: StreamTokenRecord): Promise<number> {
    const key = this.keys.streamToken(tokenHash);
    await this.redis.set(key, JSON.stringify(record), "EX", STREAM_TOKEN_TTL_S);
    return STREAM_TOKEN_TTL_S;
  }

  /**
   * The record of an event-stream token by its hash; `undefined` when unknown or expired. Its
   * lifetime is never renewed: a token lives `STREAM_TOKEN_TTL_S` from when it was made.
   */
  async readStreamToken(tokenHash: string): Promise<StreamTokenRecord | undefined> {
    const text = await this.redis.get(this.keys.streamToken(tokenHash));
    return text ? (JSON.parse(text) as StreamTokenRecord) : undefined;
  }

  /** The agent `sessionId` belongs to, if it has had a request. */
  async agentOf(sessionId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.sessionAgent(sessionId))) ?? undefined;
  }

  /** The publish time of the session's latest stored event, if it has one. */
  async latestEventTime(sessionId: string): Promise<number | undefined> {
    const [entry] = await this.redis.xrevrange(this.keys.stream(sessionId), "+", "-", "COUNT", 1);
    const text = entry ? eventTextsOf(entry[1]).at(-1) : undefined;
    if (!text) return undefined;
    const ts = (JSON.parse(text) as { ts?: unknown }).ts;
    return typeof ts === "number" ? ts : undefined;
  }

  /**
   * The ids of the runs the session's latest stored events (its own, not a child run's) belong
   * to, newest first, looking at its last `count` stream entries (a batch's events share one):
   * each event's run, then the requests
   * its answer took in (`inputIds`). Empty for a session without events.
   */
  async latestRunIds(sessionId: string, count = 50): Promise<string[]> {
    const entries = await this.redis.xrevrange(
      this.keys.stream(sessionId),
      "+",
      "-",
      "COUNT",
      count,
    );
    const ids: string[] = [];
    for (const [, fields] of entries) {
      for (const text of eventTextsOf(fields).reverse()) {
        const event = parseStoredEvent(text);
        if (!event || event.path !== undefined || typeof event.runId !== "string") continue;
        const inputs = Array.isArray(event.inputIds) ? event.inputIds.map(String) : [];
        for (const id of [event.runId, ...inputs]) if (!ids.includes(id)) ids.push(id);
      }
    }
    return ids;
  }

  /** The number of the session's latest stored event (0 for a session without events). */
  async latestEventSeq(sessionId: string): Promise<number> {
    return latestSeq(this.redis, this.keys, sessionId);
  }
}

/** The fields of a stored event that say its run, or `undefined` for text that is not JSON. */
function parseStoredEvent(
  text: string,
): { runId?: unknown; inputIds?: unknown; path?: unknown } | undefined {
  try {
    return JSON.parse(text) as { runId?: unknown; inputIds?: unknown; path?: unknown };
  } catch {
    return undefined;
  }
}
