import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { clusterKeys, connectRedis, DEFAULTS, keyLayoutOf, YiemClient } from "@yiem/core";
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

/** Waits until no request job of the coordinator queue is open (or the timeout passed). */
async function waitForDrain(topology: Topology): Promise<void> {
  const keys = clusterKeys(topology.redis.prefix, keyLayoutOf(topology.redis.target));
  const redis = connectRedis(topology.redis.target, { maxRetriesPerRequest: null });
  const queue = new Queue(keys.coordinatorQueue, { connection: redis, prefix: keys.bullPrefix });
  try {
    for (const until = Date.now() + DRAIN_TIMEOUT_MS; Date.now() < until; ) {
      const counts = await queue.getJobCounts(
        "active",
        "waiting",
        "delayed",
        "prioritized",
        "paused",
      );
      if (Object.values(counts).every((n) => n === 0)) return;
      await sleep(500);
    }
  } finally {
    await queue.close();
    redis.disconnect();
  }
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
    await waitForDrain(topology);
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
