/**
 * The critical path of one run of the peers workload: `MONITOR` on the system's private Redis
 * while `--runs` runs go one after another, each command stamped with Redis's own clock and
 * named by the process whose connection sent it (`ss`) and the script it ran; the scripted
 * model's requests are stamped on the same clock. For each run, the commands between its job's
 * add and its answer, in order, with the gap before each; then each step most runs have (a
 * process's nth command of a kind, the background left out) at its median time since the add.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/peers/criticalPath.ts [--system yiem|bullmq]
 * [--runs 30] [--show 1] [--out file] [--cpu-prof DIR] [--no-monitor]` (after `npm run build`:
 * Yiem's processes run compiled). `MONITOR` itself slows Redis and the machine: read the rows'
 * order and gaps, not the total. `--cpu-prof DIR`: the system's processes run with
 * `node --cpu-prof` and write their profiles to DIR when they stop (a sample every
 * `--cpu-prof-interval` µs, 1000 by default); `--no-monitor` runs the
 * runs without `MONITOR` and prints only their latencies (for a profile of the runs alone).
 * `--strace FILE`: `strace -tt` follows the main thread of every process of the system but
 * Redis while the traced runs go (one file each, `FILE.<pid>`): its socket reads and writes in
 * order, which shows what each one waited for (a strace'd process is slower: order, not time).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedModelServer } from "@yiem/testing";
import { Redis } from "ioredis";
import { readFlag, readPortOwners } from "../sampling/portOwners.js";
import { readScriptNames } from "../sampling/scriptNames.js";
import { measureLoad } from "./measure.js";
import { startBullmq } from "./systems/bullmq.js";
import type { PeerContext, PeerSystem } from "./systems/peerSystem.js";
import { startYiem } from "./systems/yiem.js";
import { replyTo } from "./workload.js";

/** One thing seen, on Redis's clock (ms since the epoch, µs precision). */
interface Seen {
  at: number;
  /** The process (or `model` for a request to the scripted model, `lua` for a script's own). */
  who: string;
  what: string;
  args: string[];
  source: string;
}

function describe(args: string[], scripts: Map<string, string>): string {
  const name = (args[0] ?? "").toLowerCase();
  if (name === "evalsha") return scripts.get(args[1] ?? "") ?? `evalsha ${args[1]?.slice(0, 8)}`;
  return name;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** `strace` on each of `pids` (main threads), one output file per pid; resolves once attached. */
async function startStrace(file: string, pids: number[]) {
  const args = ["-tt", "-ff", "-s", "160", "-o", file];
  args.push("-e", "trace=read,write,writev,readv,recvfrom,sendto,epoll_wait,epoll_pwait");
  for (const pid of pids) args.push("-p", String(pid));
  const child = spawn("strace", args, { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return child;
}

async function main(): Promise<void> {
  const systemName = readFlag("system", "yiem");
  const runs = Number(readFlag("runs", "30"));
  const show = Number(readFlag("show", "1"));
  const out = readFlag("out", "");
  const profDir = readFlag("cpu-prof", "");
  if (profDir) process.env.BENCH_PEERS_CPU_PROF_DIR = profDir;
  const interval = readFlag("cpu-prof-interval", "");
  if (interval) process.env.BENCH_PEERS_CPU_PROF_INTERVAL = interval;
  const monitored = !process.argv.includes("--no-monitor");
  const dataDir = await mkdtemp(join(tmpdir(), "yiem-critical-path-"));
  const effectsFile = join(dataDir, "effects.log");
  await writeFile(effectsFile, "");
  // The model's requests, stamped on the wall clock (the same machine's as Redis's `MONITOR`).
  const modelSeen: Seen[] = [];
  const model = await startScriptedModelServer({
    respond: (request) => {
      const at = performance.timeOrigin + performance.now();
      const last = request.body.messages?.at(-1) as { role?: string } | undefined;
      modelSeen.push({ at, who: "model", what: `request (${last?.role})`, args: [], source: "" });
      return replyTo(request);
    },
  });
  const ctx: PeerContext = { modelURL: model.baseURL, effectsFile, dataDir };
  const system: PeerSystem =
    systemName === "bullmq" ? await startBullmq(ctx) : await startYiem(ctx, "always");
  const url = system.redisUrl ?? "";
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  try {
    await measureLoad(system, "warm", 40, 4);
    for (let i = 0; i < 10; i++) await system.run(`warm-seq-${i}`);
    const scripts = await readScriptNames(connection);
    const seen: Seen[] = [];
    const monitor = monitored ? await connection.monitor() : undefined;
    monitor?.on("monitor", (time: string, args: string[], source: string) => {
      seen.push({ at: Number(time) * 1000, who: "", what: "", args, source });
    });
    const straceFile = readFlag("strace", "");
    const tracer = straceFile
      ? await startStrace(straceFile, (await system.pids()).slice(1))
      : undefined;
    const windows: Array<{ run: string; start: number; end: number }> = [];
    for (let i = 0; i < runs; i++) {
      const run = `traced-${i}`;
      const start = performance.timeOrigin + performance.now();
      await system.run(run);
      windows.push({ run, start, end: performance.timeOrigin + performance.now() });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (tracer) {
      tracer.kill("SIGINT");
      await new Promise((resolve) => tracer.once("exit", resolve));
    }
    if (!monitor) {
      const latencies = windows.map((w) => w.end - w.start);
      console.log(`${runs} runs, latency p50 ${median(latencies).toFixed(2)} ms (no MONITOR)`);
      return;
    }
    const owners = readPortOwners(Number(new URL(url).port));
    monitor.disconnect();
    const names = new Map<number, string>([[process.pid, "client"]]);
    for (const [i, pid] of (await system.pids()).entries())
      names.set(pid, system.pidNames?.[i] ?? `pid ${pid}`);

    for (const s of seen) {
      if (s.source === "lua") {
        s.who = "lua";
        s.what = `  > ${(s.args[0] ?? "").toLowerCase()}`;
        continue;
      }
      const pid = owners.get(s.source.split(":").at(-1) ?? "");
      s.who = pid === undefined ? `? ${s.source}` : (names.get(pid) ?? `pid ${pid}`);
      s.who += `:${s.source.split(":").at(-1)}`;
      s.what = describe(s.args, scripts);
    }

    const all = [...seen.filter((s) => s.who !== "lua"), ...modelSeen].sort((a, b) => a.at - b.at);
    // Each run: from its job's add (the client's first command in its window) to its answer.
    const perRun: Seen[][] = windows.map(({ start, end }) =>
      all.filter((s) => s.at >= start - 1 && s.at <= end + 1),
    );
    const lines: string[] = [];
    const printRun = (rows: Seen[], title: string) => {
      lines.push(`== ${title}`);
      const t0 = rows[0]?.at ?? 0;
      let prev = t0;
      for (const s of rows) {
        const extra = s.args
          .slice(s.args[0]?.toLowerCase() === "evalsha" ? 3 : 1, 5)
          .join(" ")
          .slice(0, 90);
        lines.push(
          `${(s.at - t0).toFixed(2).padStart(7)} +${(s.at - prev).toFixed(2).padStart(6)}  ${s.who.padEnd(22)} ${s.what.padEnd(34)} ${extra}`,
        );
        prev = s.at;
      }
    };
    for (let i = 0; i < Math.min(show, perRun.length); i++) {
      printRun(
        perRun[i] ?? [],
        `${windows[i]?.run}: ${((windows[i]?.end ?? 0) - (windows[i]?.start ?? 0)).toFixed(2)} ms`,
      );
    }
    // Each step of a run: a process kind's nth command of a kind (a worker is any worker), the
    // background every process keeps up left out; the steps most runs have, by their median
    // time since the run's job was added.
    const kind = (who: string) => who.replace(/:\d+$/, "").replace(/^worker \d+$/, "worker");
    const background =
      /^(bzpopmin|yiem:(beatAlive|findDeadLives|buryDeadLives|renewLease)|bullmq:extendLocks?)/;
    const stepsOf = (rows: Seen[]) => {
      const seenCount = new Map<string, number>();
      const steps = new Map<string, number>();
      const t0 = rows[0]?.at ?? 0;
      for (const row of rows) {
        if (background.test(row.what)) continue;
        const name = `${kind(row.who)} ${row.what}`;
        const n = (seenCount.get(name) ?? 0) + 1;
        seenCount.set(name, n);
        steps.set(`${name} #${n}`, row.at - t0);
      }
      return steps;
    };
    const runSteps = perRun.map(stepsOf);
    const stepNames = new Set(runSteps.flatMap((steps) => [...steps.keys()]));
    const common = [...stepNames]
      .map((name) => {
        const times = runSteps.flatMap((steps) => (steps.has(name) ? [steps.get(name) ?? 0] : []));
        return { name, runs: times.length, at: median(times) };
      })
      .filter((step) => step.runs >= 0.8 * perRun.length)
      .sort((a, b) => a.at - b.at);
    const latencies = windows.map((w) => w.end - w.start);
    lines.push(
      `== steps in at least 80 % of ${runs} runs, median ms since the job's add; latency p50 ${median(latencies).toFixed(2)} ms (MONITOR on)`,
    );
    let prevMedian = 0;
    for (const step of common) {
      lines.push(
        `${step.at.toFixed(2).padStart(7)} +${(step.at - prevMedian).toFixed(2).padStart(6)}  ${step.name}`,
      );
      prevMedian = step.at;
    }
    const client = windows.map((w, i) => w.end - (perRun[i]?.at(-1)?.at ?? w.end));
    lines.push(
      `answer seen by the client after the last command: median ${median(client).toFixed(2)} ms`,
    );
    const text = `${lines.join("\n")}\n`;
    if (out) await writeFile(out, text);
    console.log(text);
  } finally {
    connection.disconnect();
    await system.close();
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
