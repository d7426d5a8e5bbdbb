import { type ChildProcess, spawn } from "node:child_process";

/** A Yiem process started by a test, with its log lines. */
export interface TestProcess {
  child: ChildProcess;
  pid: number;
  /** Every line written so far (pino JSON for the apps). */
  lines: string[];
  /**
   * Resolves with the first line that matches; rejects after `timeoutMs`, or as soon as the
   * process has exited and closed its output with no such line.
   */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends a signal. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Where and how a test process runs. */
export interface SpawnOptions {
  /** The working directory. Default: this process's. */
  cwd?: string;
}

/** Options of {@link spawnTypeScript}. */
export interface SpawnTypeScriptOptions extends SpawnOptions {
  /** Extra export conditions, passed as `--conditions=` (e.g. `yiem-source` for sources). */
  conditions?: string[];
}

/**
 * Runs a TypeScript entry point (`entry`, relative to `cwd`) with tsx as a real child process,
 * with `env` on top of this process's environment. tsx must resolve from `cwd`.
 */
export function spawnTypeScript(
  entry: string,
  env: Record<string, string>,
  options: SpawnTypeScriptOptions = {},
): TestProcess {
  const conditions = (options.conditions ?? []).map((condition) => `--conditions=${condition}`);
  return spawnCommand([process.execPath, ...conditions, "--import", "tsx", entry], env, options);
}

/**
 * Runs `command` (an exec-form command line, as a Dockerfile `CMD` or a compose `command`
 * has it; `node` means this Node) in `options.cwd` as a real child process, with `env` on top
 * of this process's environment and `LOG_LEVEL=debug` unless `env` sets it. The child's pid is
 * the command's own.
 */
export function spawnCommand(
  command: string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): TestProcess {
  const [program = "node", ...args] = command;
  const entry = args.join(" ") || program;
  const child = spawn(program === "node" ? process.execPath : program, args, {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, LOG_LEVEL: "debug", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const onLine = (line: string) => {
    if (!line.trim()) return;
    lines.push(line);
    for (const listener of listeners) listener(line);
  };
  // A pipe may cut a line between two chunks (more often on a loaded machine): each stream
  // keeps its unfinished line until the rest comes, or the stream ends.
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) onLine(line);
    });
    stream?.on("end", () => onLine(partial));
  }
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  // "close" comes once the process exited and its output streams ended: no line comes after.
  const closed = new Promise<string>((resolve) =>
    child.once("close", (code, signal) => resolve(signal ?? `code ${code}`)),
  );
  const lastLines = () => `Last lines:\n${lines.slice(-10).join("\n")}`;
  const waitForLine = (match: (line: string) => boolean, timeoutMs = 45_000) =>
    new Promise<string>((resolve, reject) => {
      const found = lines.find(match);
      if (found) return resolve(found);
      const fail = (why: string) => {
        clearTimeout(timer);
        listeners.delete(listener);
        reject(new Error(`${entry}: ${why}. ${lastLines()}`));
      };
      const timer = setTimeout(() => fail(`no matching line within ${timeoutMs} ms`), timeoutMs);
      const listener = (line: string) => {
        if (!match(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(line);
      };
      listeners.add(listener);
      // A process that ended without the line never writes it: say so now, not at the timeout.
      void closed.then((how) => {
        if (listeners.has(listener)) fail(`exited (${how}) with no matching line`);
      });
    });
  return {
    child,
    pid: child.pid ?? -1,
    lines,
    waitForLine,
    signal: (signal) => child.kill(signal),
    exited,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A matcher for a pino line whose `msg` equals `message`. */
export function logMessage(message: string): (line: string) => boolean {
  return (line) => line.includes(`"msg":"${message}"`);
}
