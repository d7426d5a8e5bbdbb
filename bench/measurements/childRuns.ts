/**
 * A child run's overhead against a plain remote tool call, measured in the same run on one
 * compiled coordinator (the sessions cluster: a private Redis, a compiled tool worker, a
 * scripted model answering at once). Two kinds of run, one at a time, in alternating blocks:
 *
 * - `remote`: the agent `plain` calls one remote no-op tool (`noopStep`), then answers;
 * - `child`: the agent `parent` calls `agent__child` once (a child run: its own session and
 *   coordinator job; the child answers at once), then answers.
 *
 * Both make two model calls of their own; the child run adds the child's one model call, its
 * job and session, the parent's park and resume. Each run's latency is from `queue.add` to its
 * job's 'completed' event; the coordinator's CPU (`/proc/<pid>/stat`) is read around each block.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { processCpuMs } from "../sampling/processSampler.js";
import { type Summary, summarize } from "../sampling/stats.js";
import {
  openSessionsCluster,
  SESSION_ANSWER,
  SESSION_TOOL,
  type SessionsCluster,
} from "../setup/sessionsCluster.js";

/** Sizes and bounds of the scenario. */
export interface ChildRunsPlan {
  /** Runs of each kind before the measured blocks (not measured). */
  warmupRuns: number;
  /** Rounds of one block of each kind. */
  rounds: number;
  /** Runs per block, one after the other. */
  runsPerBlock: number;
  /** How long one run may take before it counts as unanswered (ms). */
  maxRunMs: number;
}

/** One kind of run, its blocks together. */
export interface ChildRunKind {
  runs: number;
  answered: number;
  /** From `queue.add` to the job's 'completed' event (ms). */
  latency: Summary;
  /** The coordinator's CPU per run over its blocks (ms). */
  cpuMsPerRun: number;
}

/** What the scenario measured. */
export interface ChildRunOverhead {
  rounds: number;
  runsPerBlock: number;
  /** Runs whose model calls one remote no-op tool. */
  remote: ChildRunKind;
  /** Runs whose model calls `agent__child` once (the child answers at once). */
  child: ChildRunKind;
  /** child − remote at p50 (ms). */
  overheadP50Ms: number;
  /** child ÷ remote coordinator CPU per run. */
  cpuRatio: number;
  durationS?: number;
}

type Kind = "remote" | "child";

const AGENT_OF: Record<Kind, string> = { remote: "plain", child: "parent" };
const PARENT_MODEL = "parent-model";
const CHILD_MODEL = "child-model";
const PLAIN_MODEL = "plain-model";

/**
 * The scripted model: after tool results, and for the child, the final answer; the parent
 * calls `agent__child` once, the plain agent `noopStep` once.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role?: string }>;
  const model = String(request.body.model);
  if (messages.at(-1)?.role === "tool" || model === CHILD_MODEL)
    return { kind: "text", text: SESSION_ANSWER };
  if (model === PARENT_MODEL)
    return {
      kind: "toolCalls",
      calls: [{ id: "call_a", name: "agent__child", arguments: { input: "answer at once" } }],
    };
  return {
    kind: "toolCalls",
    calls: [{ id: "call_a", name: SESSION_TOOL, arguments: { label: "a" } }],
  };
}

/** The `YIEM_AGENTS` file: `plain` (one remote tool), `parent` (calls `child`), `child`. */
async function writeAgentsFile(dir: string): Promise<string> {
  const instructions = "You are helpful assistant.";
  const agents = {
    plain: { instructions, model: PLAIN_MODEL, tools: [SESSION_TOOL] },
    parent: { instructions, model: PARENT_MODEL, tools: [], agents: ["child"] },
    child: { instructions, model: CHILD_MODEL, tools: [], description: "Answers at once." },
  };
  const file = join(dir, "agents.json");
  await writeFile(file, JSON.stringify({ agents }));
  return file;
}

/** Runs `count` runs of `kind` one after the other; their latencies and the coordinator's CPU. */
async function runBlock(
  cluster: SessionsCluster,
  pid: number,
  kind: Kind,
  tag: string,
  count: number,
  maxRunMs: number,
): Promise<{ latencies: number[]; cpuMs: number }> {
  const latencies: number[] = [];
  const before = (await processCpuMs(pid)) ?? Number.NaN;
  for (let i = 1; i <= count; i++) {
    const started = performance.now();
    const data = { agent: AGENT_OF[kind], input: "go" };
    const job = await cluster.queue.add("run", data, { jobId: `${tag}-${i}` });
    const result = (await job.waitUntilFinished(cluster.events, maxRunMs).catch(() => undefined)) as
      | { response?: { content?: Array<{ text?: string }> } }
      | undefined;
    if (result?.response?.content?.[0]?.text === SESSION_ANSWER)
      latencies.push(performance.now() - started);
  }
  const after = (await processCpuMs(pid)) ?? Number.NaN;
  return { latencies, cpuMs: after - before };
}

/** A kind's figures from its blocks. */
function kindOf(blocks: Array<{ latencies: number[]; cpuMs: number }>, runs: number): ChildRunKind {
  const latencies = blocks.flatMap((b) => b.latencies);
  const cpuMs = blocks.reduce((sum, b) => sum + b.cpuMs, 0);
  return {
    runs,
    answered: latencies.length,
    latency: summarize(latencies),
    cpuMsPerRun: cpuMs / runs,
  };
}

/** Measures both kinds on one coordinator: a warm-up of each, then `rounds` alternating blocks. */
async function measureOn(
  cluster: SessionsCluster,
  plan: ChildRunsPlan,
  progress: (text: string) => void,
): Promise<ChildRunOverhead> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-bench-child-runs-"));
  const coordinator = await cluster.startCoordinator(64, {
    env: { YIEM_AGENTS: await writeAgentsFile(dir) },
  });
  try {
    const pid = coordinator.process.pid;
    const { rounds, runsPerBlock, maxRunMs } = plan;
    await runBlock(cluster, pid, "remote", "warmup-remote", plan.warmupRuns, maxRunMs);
    await runBlock(cluster, pid, "child", "warmup-child", plan.warmupRuns, maxRunMs);
    const blocks: Record<Kind, Array<{ latencies: number[]; cpuMs: number }>> = {
      remote: [],
      child: [],
    };
    for (let round = 1; round <= rounds; round++) {
      progress(`child runs: round ${round} of ${rounds} (${runsPerBlock} runs of each kind)`);
      const order: Kind[] = round % 2 === 1 ? ["remote", "child"] : ["child", "remote"];
      for (const kind of order)
        blocks[kind].push(
          await runBlock(cluster, pid, kind, `${kind}-${round}`, runsPerBlock, maxRunMs),
        );
    }
    const runs = rounds * runsPerBlock;
    const remote = kindOf(blocks.remote, runs);
    const child = kindOf(blocks.child, runs);
    return {
      rounds,
      runsPerBlock,
      remote,
      child,
      overheadP50Ms: child.latency.p50 - remote.latency.p50,
      cpuRatio: child.cpuMsPerRun / remote.cpuMsPerRun,
    };
  } finally {
    await coordinator.process.stop(5000);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the scenario on a sessions cluster of its own (one compiled tool worker, the model
 * answering at once) and closes it.
 */
export async function measureChildRuns(
  plan: ChildRunsPlan,
  progress: (text: string) => void = () => undefined,
): Promise<ChildRunOverhead> {
  const startedAt = performance.now();
  const cluster = await openSessionsCluster(0, 1, { respond });
  try {
    const figures = await measureOn(cluster, plan, progress);
    return { ...figures, durationS: Math.round((performance.now() - startedAt) / 100) / 10 };
  } finally {
    await cluster.close();
  }
}
