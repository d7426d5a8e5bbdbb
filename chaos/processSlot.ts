import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { logMessage, spawnCommand, type TestProcess } from "@yiem/testing";

/** Which kind of Yiem process a slot runs. */
export type ProcessRole = "coordinator" | "worker";

/**
 * One place in the topology (`coordinator-1`, `worker-2`…) that holds a real process, started
 * as deployed (`node apps/…/dist/main.js`). The driver kills, stops and resumes the process
 * in it; `restart` starts a fresh one in its place. Log lines go to `<logDir>/<name>.log`.
 */
export interface ProcessSlot {
  name: string;
  role: ProcessRole;
  /** The process in the slot now. */
  current(): TestProcess;
  /** The pids every process of this slot had, oldest first. */
  pids: number[];
  /** Whether the process in the slot has not exited. */
  isAlive(): boolean;
  /** Sends a signal to the process in the slot. */
  signal(signal: NodeJS.Signals): void;
  /** Waits for the process in the slot to exit (after a SIGKILL). */
  exited(): Promise<void>;
  /** Starts a new process in the slot and waits until it says it is ready. */
  restart(): Promise<void>;
  /** Stops the process (SIGCONT first, in case it is stopped; then SIGTERM, SIGKILL after `graceMs`). */
  stop(graceMs: number): Promise<void>;
}

const ENTRIES: Record<ProcessRole, { command: string[]; ready: string }> = {
  coordinator: { command: ["node", "apps/coordinator/dist/main.js"], ready: "coordinator ready" },
  worker: { command: ["node", "apps/tool-worker/dist/main.js"], ready: "tool worker ready" },
};

/** How often a slot moves its process's log lines from memory to its log file. */
const LOG_FLUSH_MS = 1000;

/**
 * Starts a process in a new slot. `env` is the process environment (the slot adds
 * `YIEM_WORKER_ID` for a worker); `cwd` is the repo root the entries are relative to.
 */
export async function startProcessSlot(options: {
  name: string;
  role: ProcessRole;
  env: () => Promise<Record<string, string>>;
  cwd: string;
  logDir: string;
}): Promise<ProcessSlot> {
  const { name, role } = options;
  const logFile = join(options.logDir, `${name}.log`);
  let running: TestProcess | undefined;
  const pids: number[] = [];
  const flush = () => {
    const lines = running?.lines.splice(0) ?? [];
    if (lines.length > 0) appendFileSync(logFile, `${lines.join("\n")}\n`);
  };
  const flusher = setInterval(flush, LOG_FLUSH_MS);
  flusher.unref();
  const start = async () => {
    flush();
    const entry = ENTRIES[role];
    const env = {
      ...(await options.env()),
      ...(role === "worker" ? { YIEM_WORKER_ID: name } : {}),
    };
    const started = spawnCommand(entry.command, env, { cwd: options.cwd });
    running = started;
    pids.push(started.pid);
    appendFileSync(
      logFile,
      `--- ${new Date().toISOString()} ${name} started, pid ${started.pid}\n`,
    );
    await started.waitForLine(logMessage(entry.ready), 60_000);
  };
  const current = () => {
    if (!running) throw new Error(`${name}: no process started yet`);
    return running;
  };
  const isAlive = () => {
    const child = current().child;
    return child.exitCode === null && child.signalCode === null;
  };
  await start();
  return {
    name,
    role,
    current,
    pids,
    isAlive,
    signal: (signal) => {
      if (isAlive()) current().signal(signal);
    },
    exited: async () => {
      await current().exited;
    },
    restart: start,
    async stop(graceMs) {
      clearInterval(flusher);
      if (isAlive()) current().signal("SIGCONT");
      await current().stop(graceMs);
      flush();
    },
  };
}
