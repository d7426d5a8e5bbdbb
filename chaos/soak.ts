import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ClusterKeys,
  clusterKeys,
  connectRedis,
  DEFAULTS,
  keyLayoutOf,
  YiemClient,
} from "@yiem/core";
import { Queue } from "bullmq";
import { type ApproverRecord, startApprover } from "./approver.js";
import { type CheckResult, checkSoak } from "./check/checkSoak.js";
import { readLedger } from "./check/ledger.js";
import { readSnapshot } from "./check/snapshot.js";
import { type FaultRecord, startFaultDriver } from "./faultDriver.js";
import { createRandom } from "./random.js";
import { measureRecovery, type RecoveryFigures } from "./recovery.js";
import { startTopology, type Topology } from "./topology.js";
import { startWorkload, type WorkloadRecord } from "./workload.js";

/** Options of a soak (`npm run chaos -- …`). */
export interface SoakOptions {
  /** Inputs to send at least. */
  runs: number;
  seed: number;
  /** Run on a 3+3 Redis Cluster and kill its masters instead of restarting a single Redis. */
  cluster: boolean;
  /** The soak stops sending and injecting after this many minutes, whatever is left. */
  minutes: number;
  /** Kills to do at least (the driver stops after them). */
  kills: number;
  /** Sessions in flight at once. */
  concurrency: number;
  /** The pause between two faults, ms. */
  gapMs: [number, number];
  /** Where the ledger and the logs go (a temporary folder by default). */
  runDir?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** What a soak did and what the checker found. */
export interface SoakResult {
  options: SoakOptions;
  runDir: string;
  durationMs: number;
  faults: FaultRecord[];
  workload: WorkloadRecord;
  approver: ApproverRecord;
  check: CheckResult;
  /** How fast the kills were recovered from (see `measureRecovery`). */
  recovery: RecoveryFigures;
}

/** The chance that a step of a plan also calls the child agent (a child run of its own). */
const CHILD_CHANCE = 0.2;

/** How long the load may take to drain once the faults stopped. */
const DRAIN_TIMEOUT_MS = 180_000;

/**
 * How long the tool and decision queues may take to empty once every request is answered:
 * the longest recovery the design allows a call nobody waits for any more (its run was
 * aborted): a lost completion waits for its lock to run out and the stalled check to move it
 * (a lock and two checks), a re-run of a call without retries waits a lock duration for the
 * earlier attempt's result. A job open past this is stuck, and the checker says so.
 */
const TOOL_DRAIN_MS = DEFAULTS.lockDurationMs + 2 * DEFAULTS.stalledIntervalMs + 5000;

const OPEN_STATES = ["active", "waiting", "delayed", "prioritized", "paused"] as const;

/** Waits until no job of `queues` is open, or `timeoutMs` passed; resolves with the ms it took. */
async function waitForQueues(
  topology: Topology,
  queues: (keys: ClusterKeys) => string[],
  timeoutMs: number,
): Promise<number> {
  const keys = clusterKeys(topology.redis.prefix, keyLayoutOf(topology.redis.target));
  const redis = connectRedis(topology.redis.target, { maxRetriesPerRequest: null });
  const opened = queues(keys).map(
    (name) => new Queue(name, { connection: redis, prefix: keys.bullPrefix }),
  );
  const started = Date.now();
  try {
    for (const until = started + timeoutMs; Date.now() < until; await sleep(500)) {
      const counts = await Promise.all(opened.map((q) => q.getJobCounts(...OPEN_STATES)));
      if (counts.every((c) => Object.values(c).every((n) => n === 0))) break;
    }
    return Date.now() - started;
  } finally {
    await Promise.all(opened.map((q) => q.close()));
    redis.disconnect();
  }
}

/**
 * Waits for the load to drain: every request answered (the coordinator queue empty), then
 * every call nobody waits for any more ended (`TOOL_DRAIN_MS`). Resolves with how long the
 * second wait took.
 */
async function waitForDrain(topology: Topology): Promise<number> {
  await waitForQueues(topology, (k) => [k.coordinatorQueue], DRAIN_TIMEOUT_MS);
  return waitForQueues(
    topology,
    (k) => [k.decisionsQueue, ...k.toolQueues(undefined)],
    TOOL_DRAIN_MS,
  );
}

/**
 * Runs one soak: starts the topology, the approver, the workload and the fault driver
 * together; once the driver has done its kills and the workload its runs (or time is up),
 * waits for the load to drain and for dead holders' leases to lapse, then reads Redis and
 * the ledger and runs the checker; leaves the faults it injected (faults.json) and what the
 * checker found (findings.json) in the run folder, beside the ledger and the logs. Stops
 * every process and server it started.
 */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const runDir = options.runDir ?? (await mkdtemp(join(tmpdir(), "yiem-chaos-")));
  const started = Date.now();
  const until = started + options.minutes * 60_000;
  const random = createRandom(options.seed);
  const topology = await startTopology({
    coordinators: 2,
    workers: 3,
    cluster: options.cluster,
    runDir,
  });
  log(`topology up in ${Date.now() - started} ms (logs and ledger in ${runDir})`);
  const client = new YiemClient({ redis: topology.redis.target, prefix: topology.redis.prefix });
  const approverClient = new YiemClient({
    redis: topology.redis.target,
    prefix: topology.redis.prefix,
  });
  try {
    const approver = startApprover(approverClient, options.seed);
    const driver = startFaultDriver({
      random: random.fork("faults"),
      coordinators: topology.coordinators,
      workers: topology.workers,
      redis: topology.redis,
      kills: options.kills,
      until,
      gapMs: options.gapMs,
    });
    const workload = startWorkload(client, {
      runs: options.runs,
      concurrency: options.concurrency,
      random: random.fork("workload"),
      mix: { approvalChance: 0.06, childChance: CHILD_CHANCE },
      abortChance: 0.04,
      keepGoing: driver.active,
      sendUntil: until,
      responseTimeoutMs: 180_000,
    });
    const progress = setInterval(() => {
      log(
        `${Math.round((Date.now() - started) / 1000)} s: ${workload.record.sent.length} inputs sent, ${driver.faults.length} faults (${driver.kills()} kills)`,
      );
    }, 15_000);
    try {
      await workload.done;
      await driver.stop();
    } finally {
      clearInterval(progress);
    }
    log(
      `load sent: ${workload.record.sent.length} inputs, ${driver.faults.length} faults; draining`,
    );
    const toolDrainMs = await waitForDrain(topology);
    if (toolDrainMs > 1000)
      log(`calls still open after the last answer ended within ${toolDrainMs} ms`);
    await sleep(DEFAULTS.leaseMs + 2000); // a dead holder's lease lapses (one stopped and woken)
    await approver.stop();
    const snapshot = await readSnapshot(topology.redis.target, topology.redis.prefix);
    await writeFile(join(runDir, "faults.json"), `${JSON.stringify(driver.faults, null, 1)}\n`);
    const check = checkSoak({
      snapshot,
      ledger: await readLedger(topology.ledgerPath),
      sent: workload.record.sent,
      seed: options.seed,
      cluster: options.cluster,
      liveCoordinatorPids: topology.coordinators
        .filter((c) => c.isAlive())
        .map((c) => c.current().pid),
    });
    await writeFile(join(runDir, "findings.json"), `${JSON.stringify(check.findings, null, 1)}\n`);
    const slots = [...topology.coordinators, ...topology.workers].map((slot) => slot.name);
    return {
      recovery: measureRecovery(topology.logDir, driver.faults, workload.record.sent, slots),
      options,
      runDir,
      durationMs: Date.now() - started,
      faults: driver.faults,
      workload: workload.record,
      approver: approver.record,
      check,
    };
  } finally {
    await client.close();
    await approverClient.close();
    await topology.stop();
  }
}
