/**
 * Where a run's Redis commands come from: `MONITOR` on the `sessions` scenario's cluster
 * (compiled coordinator, two compiled tool workers, a private Redis) while `--runs` runs of
 * its shape (two model calls, two parallel tool calls; one `addBulk`, or with `--sequential`
 * one run after another) go through, then for
 * as long again with nothing sent (the background every process keeps up). Every command is
 * attributed to the process whose connection sent it (the bench's client, the coordinator,
 * each worker) and to the script it ran in (`EVALSHA`s named by `scriptNames.ts`); the
 * background is subtracted per row. Prints the table; `--out <file>` keeps the raw lines.
 * With `--sends` the requests come from a client process of their own, each a
 * `YiemClient.send` with its own new session (as the CLI, the gateway and the faces send),
 * instead of the bench's `addBulk` of session-less jobs.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/monitorRuns.ts [--runs 1] [--sequential] [--sends] [--out file]`
 * (after `npm run build`: the processes run compiled).
 */
import { writeFile } from "node:fs/promises";
import type { Redis } from "ioredis";
import { readFlag, readPortOwners } from "./sampling/portOwners.js";
import { readScriptNames } from "./sampling/scriptNames.js";
import { openSessionsCluster, type SessionsCluster } from "./setup/sessionsCluster.js";
import { type Arrival, runSessions, startSessionSender } from "./setup/sessionsLoad.js";

/** One command as `MONITOR` gave it. */
interface Seen {
  args: string[];
  /** `ip:port` of the connection that sent it, or `lua` for a script's own commands. */
  source: string;
}

/** A window's commands, counted by row (`process | command` or `process | script > inner`). */
type Rows = Map<string, number>;

/** Records every command the server runs until the returned function is called. */
async function recordCommands(connection: Redis): Promise<() => Promise<Seen[]>> {
  const seen: Seen[] = [];
  const monitor = await connection.monitor();
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    seen.push({ args, source });
  });
  return async () => {
    monitor.disconnect();
    return seen;
  };
}

/** Names each process of the cluster by pid. */
function nameProcesses(cluster: SessionsCluster, coordinatorPid: number): Map<number, string> {
  const names = new Map<number, string>([
    [process.pid, "bench client"],
    [coordinatorPid, "coordinator"],
  ]);
  for (const [i, worker] of cluster.workers.entries()) names.set(worker.pid, `worker ${i + 1}`);
  return names;
}

/** What a command is: a script by its name, else the command's name. */
function describe(args: string[], scripts: Map<string, string>): string {
  const name = (args[0] ?? "").toLowerCase();
  if (name === "evalsha") return scripts.get(args[1] ?? "") ?? `evalsha ${args[1]?.slice(0, 8)}`;
  if (name === "eval") return "eval (script text)";
  return name;
}

/**
 * Counts a window's commands by row. Redis 7's `MONITOR` gives a script call before the
 * commands it runs (source `lua`), so each `lua` line belongs to the last call before it.
 */
function countRows(
  seen: Seen[],
  scripts: Map<string, string>,
  processOf: (source: string) => string,
): Rows {
  const rows: Rows = new Map();
  const add = (row: string) => rows.set(row, (rows.get(row) ?? 0) + 1);
  let caller = "";
  for (const { args, source } of seen) {
    if (source === "lua") {
      add(`${caller} > ${(args[0] ?? "").toLowerCase()}`);
      continue;
    }
    caller = `${processOf(source)} | ${describe(args, scripts)}`;
    add(caller);
  }
  return rows;
}

/** One caller's commands per run: its own call and those its script ran, by name. */
interface CallerCost {
  caller: string;
  total: number;
  inner: Map<string, number>;
}

/** The load's rows minus the background's, per run, grouped by caller. */
function costPerCaller(load: Rows, idle: Rows, runs: number): CallerCost[] {
  const callers = new Map<string, CallerCost>();
  for (const row of new Set([...load.keys(), ...idle.keys()])) {
    const perRun = ((load.get(row) ?? 0) - (idle.get(row) ?? 0)) / runs;
    const [caller = "", inner] = row.split(" > ");
    const cost = callers.get(caller) ?? { caller, total: 0, inner: new Map() };
    cost.total += perRun;
    if (inner) cost.inner.set(inner, (cost.inner.get(inner) ?? 0) + perRun);
    callers.set(caller, cost);
  }
  return [...callers.values()].sort((a, b) => b.total - a.total);
}

/** Prints each caller's commands per run (its script's own commands inline), largest first. */
function printCosts(costs: CallerCost[]): void {
  const sum = (pick: (c: CallerCost) => boolean) =>
    costs.filter(pick).reduce((total, c) => total + c.total, 0);
  console.log(`commands per run (scripts' own commands included): ${sum(() => true).toFixed(1)}`);
  console.log(`  BullMQ scripts: ${sum((c) => c.caller.includes("| bullmq:")).toFixed(1)}`);
  console.log(`  Yiem scripts: ${sum((c) => c.caller.includes("| yiem:")).toFixed(1)}`);
  console.log(`  plain commands: ${sum((c) => !/\| (yiem|bullmq):/.test(c.caller)).toFixed(1)}`);
  for (const cost of costs) {
    if (Math.abs(cost.total) < 0.05) continue;
    const inner = [...cost.inner]
      .filter(([, n]) => Math.abs(n) >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} ${n.toFixed(2)}`)
      .join(", ");
    console.log(
      `${cost.total.toFixed(2).padStart(8)}  ${cost.caller}${inner ? `  (${inner})` : ""}`,
    );
  }
}

/** Runs the load and the background window, each monitored. */
async function main(): Promise<void> {
  const runs = Number(readFlag("runs", "1"));
  const sequential = process.argv.includes("--sequential");
  const out = readFlag("out", "");
  const cluster = await openSessionsCluster(5, 2);
  try {
    const coordinator = await cluster.startCoordinator(64);
    const input = "run both steps";
    await runSessions(cluster, { kind: "bulk", input }, "warm", 10, 60_000);
    const sender = process.argv.includes("--sends")
      ? await startSessionSender(cluster, sequential ? 1 : runs, input)
      : undefined;
    const arrival: Arrival = sender ? { kind: "sends", sender } : { kind: "bulk", input };
    if (sender) await runSessions(cluster, arrival, "warm", 1, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const scripts = await readScriptNames(cluster.connection);
    const names = nameProcesses(cluster, coordinator.process.pid);
    if (sender) names.set(sender.pid, "client (YiemClient.send)");
    const port = Number(new URL(cluster.redis.url).port);
    const started = performance.now();
    const stopLoad = await recordCommands(cluster.connection);
    if (sequential) {
      for (let i = 1; i <= runs; i++) {
        await runSessions(cluster, arrival, `monitored-${i}`, 1, 60_000);
      }
    } else await runSessions(cluster, arrival, "monitored", runs, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const owners = readPortOwners(port);
    const load = await stopLoad();
    const stopIdle = await recordCommands(cluster.connection);
    await new Promise((resolve) => setTimeout(resolve, performance.now() - started));
    const idle = await stopIdle();
    const processOf = (source: string) => {
      const pid = owners.get(source.split(":").at(-1) ?? "");
      return pid === undefined ? `? ${source}` : (names.get(pid) ?? `pid ${pid}`);
    };
    if (out) {
      const line = (s: Seen) =>
        `${processOf(s.source)}\t${describe(s.args, scripts)}\t${s.args.slice(0, 4).join(" ").slice(0, 400)}`;
      await writeFile(out, `${load.map(line).join("\n")}\n`);
    }
    printCosts(
      costPerCaller(countRows(load, scripts, processOf), countRows(idle, scripts, processOf), runs),
    );
    await sender?.stop();
  } finally {
    await cluster.close();
  }
}

await main();
