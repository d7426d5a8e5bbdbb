import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** A Yiem process started by a test, with its log lines. */
export interface TestProcess {
  child: ChildProcess;
  pid: number;
  /** Every line written so far (pino JSON for the apps). */
  lines: string[];
  /** Resolves with the first line (parsed when JSON) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends a signal. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Runs a TypeScript entry point of the repo (`apps/.../main.ts`) with tsx as a real child
 * process (workspace packages from their sources), with `env` on top of this process's
 * environment.
 */
export function spawnApp(entry: string, env: Record<string, string>): TestProcess {
  return spawnCommand(
    [process.execPath, "--conditions=yiem-source", "--import", "tsx", entry],
    env,
  );
}

/**
 * Runs `command` (an exec-form command line, as a Dockerfile `CMD` or a compose `command`
 * has it; `node` means this Node) from the repository root as a real child process, with
 * `env` on top of this process's environment. The child's pid is the command's own.
 */
export function spawnCommand(command: string[], env: Record<string, string>): TestProcess {
  const [program = "node", ...args] = command;
  const entry = args.join(" ");
  const child = spawn(program === "node" ? process.execPath : program, args, {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "debug", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      lines.push(line);
      for (const listener of listeners) listener(line);
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const waitForLine = (match: (line: string) => boolean, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const found = lines.find(match);
      if (found) return resolve(found);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(
          new Error(
            `${entry}: no matching line within ${timeoutMs} ms. Last lines:\n${lines.slice(-10).join("\n")}`,
          ),
        );
      }, timeoutMs);
      const listener = (line: string) => {
        if (!match(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(line);
      };
      listeners.add(listener);
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
