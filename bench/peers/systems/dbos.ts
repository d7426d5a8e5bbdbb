/**
 * DBOS Transact on Debian's PostgreSQL (reached over its Unix socket, commits synchronous as
 * PostgreSQL ships), a private database per run: the agent process (`processes/dbosAgent.ts`)
 * and two tool processes dequeuing from the `tools` queue. Runs arrive over HTTP; a run whose
 * request broke (its process was killed) is asked again with the same key until it answers.
 */
import { execFileSync } from "node:child_process";
import { freePort } from "@yiem/testing";
import type { PeerContext, PeerSystem } from "./peerSystem.js";
import { sleep } from "./peerSystem.js";
import { firstOf, startPeerProcess } from "./processes.js";

/** Where Debian's PostgreSQL listens (a Unix socket works in a private network namespace). */
const SOCKET_DIR = "/var/run/postgresql";

/** Runs one SQL statement as `postgres` over the socket; its rows, one per line. */
function psql(database: string, sql: string): string[] {
  const out = execFileSync(
    "psql",
    ["-h", SOCKET_DIR, "-U", "postgres", "-d", database, "-Atc", sql],
    {
      encoding: "utf8",
    },
  );
  return out.split("\n").filter(Boolean);
}

/** Whether PostgreSQL answers on its socket. */
export function postgresAvailable(): boolean {
  try {
    psql("postgres", "select 1");
    return true;
  } catch {
    return false;
  }
}

/** Asks the agent for run `run` until an answer comes (retrying while its process is down). */
async function askUntilAnswered(port: number, run: string): Promise<string> {
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/run/${encodeURIComponent(run)}`, {
        method: "POST",
      });
      const body = await response.text();
      if (response.ok) return JSON.parse(body) as string;
    } catch {
      // the agent process is down: ask its replacement
    }
    await sleep(100);
  }
}

/** Starts DBOS with a fresh database. */
export async function startDbos(ctx: PeerContext): Promise<PeerSystem> {
  const database = `yiem_peers_${process.pid}_${Date.now().toString(36)}`;
  psql("postgres", `create database ${database}`);
  const port = await freePort();
  const env = {
    BENCH_MODEL_URL: ctx.modelURL,
    BENCH_PEERS_EFFECTS: ctx.effectsFile,
    BENCH_DBOS_URL: `postgresql://postgres@localhost/${database}?host=${SOCKET_DIR}`,
    BENCH_PORT: String(port),
  };
  const agent = await startPeerProcess("dbosAgent", env);
  const tools = await Promise.all(
    ["tools-1", "tools-2"].map((id) =>
      startPeerProcess("dbosTools", { ...env, BENCH_EXECUTOR_ID: id }),
    ),
  );
  const backends = () =>
    psql("postgres", `select pid from pg_stat_activity where datname = '${database}'`).map(Number);
  return {
    name: "DBOS (50 ms polls)",
    run: (run) => askUntilAnswered(port, run),
    pids: async () => [agent.current().pid, ...tools.map((t) => t.current().pid), ...backends()],
    killOrchestrator: () => agent.kill(),
    killToolWorker: () => firstOf(tools).kill(),
    async close() {
      await Promise.all([agent, ...tools].map((p) => p.stop()));
      psql("postgres", `drop database if exists ${database} with (force)`);
    },
  };
}
