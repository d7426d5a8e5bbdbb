import { type Finding, note, violation } from "./findings.js";
import type { KeyRecord } from "./snapshot.js";

const DAY_MS = 24 * 3600 * 1000;

/**
 * A kind of key under the prefix (`packages/core/src/redis/keys.ts`, BullMQ's layout) and
 * what the docs say of its lifetime once every run has ended: `ttlMs` the longest expiry it
 * may carry (it must carry one), `none` kept without an expiry by design, `absent` must not
 * exist any more.
 */
interface KeyKind {
  name: string;
  match: RegExp;
  lifetime: { ttlMs: number } | "none" | "absent";
}

/** The key kinds, matched against the key with the prefix removed. */
const KEY_KINDS: KeyKind[] = [
  // A session's state: kept 30 days after its last run (SESSION_TTL_SECONDS), response 1 day.
  { name: "session transcript", match: /^s:\{[^}]+\}:messages$/, lifetime: { ttlMs: 30 * DAY_MS } },
  { name: "session events", match: /^s:\{[^}]+\}:events$/, lifetime: { ttlMs: 30 * DAY_MS } },
  {
    name: "session inputs",
    match:
      /^s:\{[^}]+\}:(inputs|pendingInputs|pendingFollowUps|running|inputDigests|inputBudgets)$/,
    lifetime: { ttlMs: 30 * DAY_MS },
  },
  // A client's abort request not yet taken into its run (a run that ended first ignores it).
  {
    name: "abort request",
    match: /^s:\{[^}]+\}:abortRequested$/,
    lifetime: { ttlMs: 30 * DAY_MS },
  },
  // A tree of agents: a session's child runs and a child's parent call, kept as the session;
  // a child's abort that came before its run opened (taken by that run).
  {
    name: "tree of agents",
    match: /^s:\{[^}]+\}:(children|parent|abortOnStart)$/,
    lifetime: { ttlMs: 30 * DAY_MS },
  },
  // What a session is (known to the cluster) and used, kept as the session; a tree's ledger of
  // its root run's budget, kept as its root session.
  {
    name: "session records",
    match: /^s:\{[^}]+\}:(known|usage|ledger:.+)$/,
    lifetime: { ttlMs: 30 * DAY_MS },
  },
  // Requests `YiemClient.send` sent and no coordinator recorded yet (an hour at most): a
  // request given up (its job failed before it was recorded) stays until its expiry.
  { name: "sent requests", match: /^s:\{[^}]+\}:submitted$/, lifetime: { ttlMs: 3600_000 } },
  // A tree's calls awaiting approval, on its root: emptied (so gone) once nothing waits.
  { name: "tree approval index", match: /^s:\{[^}]+\}:treeApprovals$/, lifetime: "absent" },
  { name: "stored response", match: /^s:\{[^}]+\}:response:.+$/, lifetime: { ttlMs: DAY_MS } },
  // The agent a session belongs to: kept 30 days after its last request.
  { name: "session agent", match: /^s:\{[^}]+\}:agent$/, lifetime: { ttlMs: 30 * DAY_MS } },
  // What agents each coordinator serves: one hash, refreshed while any coordinator runs.
  { name: "agent announcements", match: /^\{agents\}:coordinators$/, lifetime: { ttlMs: DAY_MS } },
  { name: "session lease", match: /^s:\{[^}]+\}:lease$/, lifetime: { ttlMs: 60_000 } },
  // An open run, or one parked for approval: none may be left once every run ended.
  {
    name: "open run",
    match: /^s:\{[^}]+\}:(run|runInputs|approvals|decisions|parkedResults)$/,
    lifetime: "absent",
  },
  // Indexes of calls awaiting approval: emptied (so gone) once nothing waits.
  { name: "approval index", match: /^(approvalsPending|approvalDeadlines)$/, lifetime: "absent" },
  // The worker registry: the set lives on, each worker's record expires when it stops beating.
  { name: "worker registry", match: /^\{workers\}:workers$/, lifetime: "none" },
  // The failure detector's lives (every process's, by heartbeat), dead lives (10 minutes) and
  // watched lives (whose process holds its life's subscription).
  { name: "process lives", match: /^\{workers\}:(alive|dead|watched)$/, lifetime: "none" },
  { name: "worker heartbeat", match: /^\{workers\}:worker:.+$/, lifetime: { ttlMs: 5 * 60_000 } },
  // A tool definition workers announce (by digest): refreshed by their heartbeats, 60 s TTL.
  {
    name: "tool definition",
    match: /^\{workers\}:toolDefinition:[0-9a-f]+$/,
    lifetime: { ttlMs: 5 * 60_000 },
  },
  // A finished tool job's marker: as long as the job, 1 h with a result, 24 h without.
  { name: "finished marker", match: /^toolDone:.+$/, lifetime: { ttlMs: DAY_MS } },
  // Written tools are kept until replaced (none in the soak, listed for completeness).
  { name: "written tools", match: /^\{writtenTools\}(:.*)?$/, lifetime: "none" },
  // BullMQ: job locks expire; job hashes and queue structures are removed by the jobs'
  // retention (checked on the jobs), not by a TTL.
  { name: "job lock", match: /^bull:[^:]+:[^:]+:lock$/, lifetime: { ttlMs: 5 * 60_000 } },
  {
    name: "queue structure",
    match:
      /^bull:[^:]+:(meta|id|events|wait|paused|active|prioritized|delayed|completed|failed|stalled|stalled-check|marker|limiter|pc|metrics:.+|de:.+|waiting-children)$/,
    lifetime: "none",
  },
  { name: "job", match: /^bull:[^:]+:[^:]+(:logs)?$/, lifetime: "none" },
];

/**
 * How old an orphan entry of the approval index may be before a coordinator's sweep must have
 * dropped it: entries older than a minute (or two leases) go, every 30 s (`approvalServices.ts`).
 */
const ORPHAN_INDEX_SWEPT_WITHIN_MS = 100_000;

/**
 * The approval index's leftover entries a sweep still drops: every run has ended, so each
 * names a call no longer waiting, written by a coordinator stopped past its lease and woken
 * (the index, in another slot than the session, is not fenced by its lease; readers skip
 * such entries). The sweep drops each from its tree's index too, where the same coordinator
 * wrote it. Empty when any entry is older than a sweep allows.
 */
function sweptSoon(keys: KeyRecord[]): Set<string> {
  const pending = keys.find((record) => /:approvalsPending$/.test(record.key));
  const ages = pending?.memberAgesMs ?? [];
  if (ages.length === 0 || ages.some((age) => age > ORPHAN_INDEX_SWEPT_WITHIN_MS)) return new Set();
  return new Set(pending?.members ?? []);
}

/** A key of a kind that must be gone: a note when only young index orphans are left, else a violation. */
function leftoverFinding(record: KeyRecord, kind: KeyKind, swept: Set<string>): Finding {
  const members = record.members ? ` (${record.members.join(", ")})` : "";
  const detail = `${kind.name} left after every run ended${members}`;
  const orphansOnly =
    (kind.name === "approval index" || kind.name === "tree approval index") &&
    (record.members?.length ?? 0) > 0 &&
    record.members?.every((member) => swept.has(member));
  if (orphansOnly) return note("keys", record.key, `${detail}: orphans the next sweep drops`);
  return violation("keys", record.key, detail);
}

/** The kind of `key` (without the prefix), if it is a known one. */
export function keyKindOf(key: string): KeyKind | undefined {
  return KEY_KINDS.find((kind) => kind.match.test(key));
}

/**
 * Checks every key under the prefix against its kind: a key that must expire has an expiry
 * no longer than its documented retention; a key that must be gone once every run ended is
 * gone; an unknown key is reported (nothing may write keys the docs do not list).
 */
export function checkKeys(
  keys: KeyRecord[],
  prefix: string,
): { findings: Finding[]; kinds: Map<string, number> } {
  const findings: Finding[] = [];
  const kinds = new Map<string, number>();
  for (const record of keys) {
    const key = record.key.startsWith(`${prefix}:`)
      ? record.key.slice(prefix.length + 1)
      : record.key;
    const kind = keyKindOf(key);
    if (!kind) {
      findings.push(
        violation("keys", record.key, `unknown key (${record.type}, ttl ${record.ttlMs} ms)`),
      );
      continue;
    }
    kinds.set(kind.name, (kinds.get(kind.name) ?? 0) + 1);
    if (kind.lifetime === "absent") {
      findings.push(leftoverFinding(record, kind, sweptSoon(keys)));
    } else if (kind.lifetime !== "none") {
      if (record.ttlMs < 0)
        findings.push(violation("keys", record.key, `${kind.name} without a TTL`));
      else if (record.ttlMs > kind.lifetime.ttlMs)
        findings.push(
          violation(
            "keys",
            record.key,
            `${kind.name} kept ${record.ttlMs} ms, past its retention of ${kind.lifetime.ttlMs} ms`,
          ),
        );
    }
  }
  return { findings, kinds };
}
