import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentMessage, clusterKeys, connectRedis, type RedisTarget } from "@yiem/core";
import { type TestCluster, type TestClusterOptions, useTestCluster } from "./cluster.js";
import { repoRoot } from "./processes.js";

/** A ledger file the fault-test tools append to, one line per execution: `<callId> <label> <pid>`. */
export interface Ledger {
  path: string;
  /** Every recorded execution. */
  entries(): Promise<Array<{ callId: string; label: string; pid: number }>>;
  /** How many times each call id ran. */
  countsByCall(): Promise<Map<string, number>>;
}

/** Creates an empty ledger in a temporary folder. */
export async function createLedger(): Promise<Ledger> {
  const path = join(await mkdtemp(join(tmpdir(), "yiem-ledger-")), "ledger.txt");
  await writeFile(path, "");
  const entries = async () =>
    (await readFile(path, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [callId = "", label = "", pid = "0"] = line.split(" ");
        return { callId, label, pid: Number(pid) };
      });
  return {
    path,
    entries,
    async countsByCall() {
      const counts = new Map<string, number>();
      for (const entry of await entries())
        counts.set(entry.callId, (counts.get(entry.callId) ?? 0) + 1);
      return counts;
    },
  };
}

/**
 * Starts a test cluster for the calling file (`useTestCluster` with `options`) whose tools
 * record every execution in a fresh ledger: its path is added to the env as
 * `YIEM_TEST_LEDGER`. The returned ledger stands for that one; reading it outside a test throws.
 *
 * @example const { cluster, ledger } = useLedgerCluster({ workers: 2, model: { respond } });
 */
export function useLedgerCluster(options: TestClusterOptions): {
  cluster: TestCluster;
  ledger: Ledger;
} {
  let current: Ledger | undefined;
  const cluster = useTestCluster(async () => {
    current = await createLedger();
    return { ...options, env: { ...options.env, YIEM_TEST_LEDGER: current.path } };
  });
  const ledger = new Proxy({} as Ledger, {
    get(_target, property) {
      if (!current) throw new Error("the ledger is not created yet (used outside a test?)");
      return current[property as keyof Ledger];
    },
  });
  return { cluster, ledger };
}

/** A transcript without timestamps, usage or model metadata: what must be equal across runs. */
export function normalizeTranscript(messages: AgentMessage[]): unknown[] {
  return messages.map((message) => {
    if (message.role === "user") return { role: "user", content: message.content };
    if (message.role === "assistant")
      return { role: "assistant", content: message.content, stopReason: message.stopReason };
    return {
      role: "toolResult",
      toolCallId: message.toolCallId,
      content: message.content,
      isError: message.isError,
    };
  });
}

/** The pid of the coordinator holding a session's lease (its token is `<host>-<pid>:<uuid>`), if any. */
export async function leaseHolderPid(
  redisTarget: RedisTarget,
  prefix: string,
  sessionId: string,
): Promise<number | undefined> {
  const redis = connectRedis(redisTarget);
  try {
    const token = await redis.get(clusterKeys(prefix).lease(sessionId));
    const match = token?.match(/-(\d+):[^:]+$/);
    return match ? Number(match[1]) : undefined;
  } finally {
    redis.disconnect();
  }
}

/**
 * Waits until no coordinator holds the session's lease (its run is parked or over), polling
 * every 50 ms; throws after 10 s, naming the session.
 */
export async function waitUntilSessionUnheld(
  redisTarget: RedisTarget,
  prefix: string,
  sessionId: string,
): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await leaseHolderPid(redisTarget, prefix, sessionId)) === undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`session ${sessionId} is still held`);
}

/** One scenario's figures for docs/RELIABILITY.md. */
export interface ReliabilityFigure {
  scenario: string;
  runs: number;
  calls: number;
  lost: number;
  duplicated: number;
  recoveryMs?: number;
  note?: string;
}

/** Where fault tests leave their figures for `npm run reliability`. */
export const figuresDir = join(repoRoot, "test/faults/.figures");

/** Records a scenario's figures (one JSON file per scenario). */
export async function recordFigure(figure: ReliabilityFigure): Promise<void> {
  await mkdir(figuresDir, { recursive: true });
  const file = figure.scenario.replace(/[^A-Za-z0-9]+/g, "-").toLowerCase();
  await writeFile(
    join(figuresDir, `${file}.json`),
    `${JSON.stringify({ ...figure, recordedAt: new Date().toISOString() }, null, 2)}\n`,
  );
}

/** Resolves once `check` resolves true (asked every 20 ms); rejects after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runs the Redis at `url` out of memory for `ms` (`maxmemory` 1 under `noeviction`), then gives
 * its memory back. Resolves whether a write was refused for memory meanwhile (a probe key under
 * `prefix`), which a test asserts so an outage that never happened cannot pass for one.
 */
export async function runOutOfMemory(url: string, prefix: string, ms: number): Promise<boolean> {
  const admin = connectRedis(url);
  try {
    await admin.config("SET", "maxmemory-policy", "noeviction");
    await admin.config("SET", "maxmemory", "1");
    const refused = await admin.set(`${prefix}:probe`, "x").then(
      () => false,
      (err: Error) => /OOM/.test(err.message),
    );
    await new Promise((resolve) => setTimeout(resolve, ms));
    await admin.config("SET", "maxmemory", "0");
    return refused;
  } finally {
    admin.disconnect();
  }
}
