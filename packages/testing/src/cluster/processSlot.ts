import { join } from "node:path";
import { freePort } from "../ports/freePort.js";
import { logMessage, spawnCommand, type TestProcess } from "../processes/processes.js";
import { type ClusterLaunch, type ClusterRole, roleCommand, roleEntry } from "./clusterRoles.js";
import { openSlotLog } from "./slotLog.js";

/** How long a process that never got ready gets between SIGTERM and SIGKILL. */
const NOT_READY_GRACE_MS = 1000;

/** How many ports a slot's first start tries when the one it picked was taken before its bind. */
const PICKED_PORT_TRIES = 3;

/** Options of {@link startProcessSlot}. */
export interface ProcessSlotOptions {
  /** Which app the slot runs. */
  role: ClusterRole;
  /** The slot's name (`coordinator-1`, `worker-2`…); a worker's `YIEM_WORKER_ID`. */
  name: string;
  /**
   * The process's environment, on top of this process's (`LOG_LEVEL=debug` unless it sets
   * one). The slot adds the HTTP port (`PORT`, `GATEWAY_PORT`: a free one unless set here)
   * and a worker's `YIEM_WORKER_ID`.
   */
  env: Record<string, string>;
  /** The Yiem checkout the commands run in (`apps/…` relative to it). @defaultValue this process's */
  cwd?: string;
  /** Compiled as deployed, or from the TypeScript sources. @defaultValue `"compiled"` */
  launch?: ClusterLaunch;
  /** `node` flags before the entry point (e.g. `--inspect=127.0.0.1:0`). */
  nodeFlags?: string[];
  /**
   * A folder for the slot's log file `<name>.log`: lines are moved there instead of staying in
   * `TestProcess.lines` (for long runs). Absent: they stay in memory.
   */
  logDir?: string;
  /** How long a process may take to log that it is ready. @defaultValue 60 s */
  readyTimeoutMs?: number;
  /** Tools a coordinator's or worker's ready line must list (it fails otherwise). */
  expectTools?: string[];
  /**
   * Picks the HTTP port when `env` gives none (tests of the slot pass one that returns a taken
   * port first). @defaultValue `freePort`
   */
  pickPort?: () => Promise<number>;
}

/**
 * One place of a cluster (`coordinator-1`, `worker-2`…) that holds a real process; `restart`
 * starts a fresh one in its place (same name, environment and port), as a supervisor would.
 */
export interface ProcessSlot {
  /** The slot's name (`coordinator-1`); a worker's `YIEM_WORKER_ID`. */
  readonly name: string;
  /** Which app the slot runs. */
  readonly role: ClusterRole;
  /**
   * `http://127.0.0.1:<port>` of a coordinator or gateway once started (and of a worker given
   * `WORKER_PORT`); undefined before, and for a worker without a port.
   */
  readonly url: string | undefined;
  /** The process in the slot now; throws before the first start. */
  current(): TestProcess;
  /** The pids every process of this slot had, oldest first. */
  readonly pids: number[];
  /** Whether the process in the slot has not exited. */
  isAlive(): boolean;
  /** Sends a signal to the process in the slot (none once it exited). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves once the process in the slot has exited (e.g. after a SIGKILL). */
  exited(): Promise<void>;
  /**
   * Starts a new process in the slot and waits until it logs that it is ready; one that does
   * not within the timeout (or whose ready line lacks an expected tool) is stopped, and this
   * rejects naming the slot. It never stops the process already in the slot: kill it first.
   */
  restart(): Promise<void>;
  /**
   * Stops the process in the slot: SIGCONT first (in case it was SIGSTOPped), then SIGTERM,
   * SIGKILL after `graceMs` (default 5 s); moves its last log lines. A no-op once it exited.
   */
  stop(graceMs?: number): Promise<void>;
}

/** A slot with no process yet: {@link ProcessSlot.restart} starts the first. */
export function createProcessSlot(options: ProcessSlotOptions): ProcessSlot {
  const { name, role } = options;
  const entry = roleEntry(role);
  const log = options.logDir ? openSlotLog(name, join(options.logDir, `${name}.log`)) : undefined;
  const pids: number[] = [];
  let port: string | undefined = options.env[entry.portVariable];
  let running: TestProcess | undefined;
  const current = () => {
    if (!running) throw new Error(`${name}: no process started yet`);
    return running;
  };
  const isAlive = () => {
    const child = running?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  };
  // A port picked here (not given in `env`) may be taken by another test between the pick and
  // the bind: a first start that finds it in use picks another, up to PICKED_PORT_TRIES.
  const pickedPort = port === undefined && entry.pickPort;
  let wasReady = false;
  const startOnce = async () => {
    if (port === undefined && entry.pickPort) port = String(await (options.pickPort ?? freePort)());
    const env = {
      ...options.env,
      ...(port === undefined ? {} : { [entry.portVariable]: port }),
      ...(role === "worker" ? { YIEM_WORKER_ID: name } : {}),
    };
    const command = roleCommand(role, options.launch ?? "compiled", options.nodeFlags);
    const started = spawnCommand(command, env, { cwd: options.cwd });
    running = started;
    pids.push(started.pid);
    log?.follow(started);
    try {
      const line = await started.waitForLine(
        logMessage(entry.ready),
        options.readyTimeoutMs ?? 60_000,
      );
      expectToolsIn(line, options.expectTools ?? [], role);
      wasReady = true;
      return "ready" as const;
    } catch (err) {
      await started.stop(NOT_READY_GRACE_MS);
      // Before the first ready, every process of the slot so far was a failed start.
      const retry = pickedPort && !wasReady && pids.length < PICKED_PORT_TRIES;
      if (retry && lostPortRace(started, port, err)) {
        port = undefined;
        return "port taken" as const;
      }
      throw new Error(`${name} (pid ${started.pid}) did not get ready: ${describe(err)}`);
    }
  };
  const restart = async () => {
    while ((await startOnce()) === "port taken") {}
  };
  return {
    name,
    role,
    get url() {
      return port === undefined ? undefined : `http://127.0.0.1:${port}`;
    },
    current,
    pids,
    isAlive,
    signal: (signal) => {
      if (isAlive()) current().signal(signal);
    },
    exited: async () => {
      await current().exited;
    },
    restart,
    async stop(graceMs = 5000) {
      if (isAlive()) running?.signal("SIGCONT");
      await running?.stop(graceMs);
      log?.close();
    },
  };
}

/**
 * Starts a real process of `role` in a new slot and resolves once it logged that it is ready
 * (see {@link ProcessSlot.restart}); a process that does not get ready is stopped, never
 * left behind.
 *
 * @example const gateway = await startProcessSlot({ role: "gateway", name: "gateway", env, cwd });
 */
export async function startProcessSlot(options: ProcessSlotOptions): Promise<ProcessSlot> {
  const slot = createProcessSlot(options);
  await slot.restart();
  return slot;
}

/** Throws unless a coordinator's or worker's ready `line` lists every tool of `tools`. */
function expectToolsIn(line: string, tools: readonly string[], role: ClusterRole): void {
  if (role === "gateway") return;
  const missing = tools.filter((tool) => !line.includes(`"${tool}"`));
  if (missing.length > 0) throw new Error(`ready without the tools ${missing.join(", ")}: ${line}`);
}

/** Whether `started` failed because its HTTP `port` was in use (the apps log `port N is in use`). */
function lostPortRace(started: TestProcess, port: string | undefined, err: unknown): boolean {
  if (port === undefined) return false;
  const said = `port ${port} is in use`;
  return describe(err).includes(said) || started.lines.some((line) => line.includes(said));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
