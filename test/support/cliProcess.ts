import { spawn } from "node:child_process";
import { repoRoot } from "./processes.js";

/** What a finished `yiem` process printed, and its exit code (null when a signal ended it). */
export interface CliRun {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** A running `yiem` process. */
export interface CliProcess {
  done: Promise<CliRun>;
  /** Resolves with the first match of `pattern` in everything printed to stdout so far. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Ctrl-C. */
  interrupt(): void;
}

/** Starts the compiled `yiem` (apps/cli/bin/yiem.js) as a real process, stdout on a pipe. */
export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ["apps/cli/bin/yiem.js", ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  const watchers = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString("utf8");
    for (const watcher of watchers) watcher();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString("utf8");
  });
  const done = new Promise<CliRun>((resolve) =>
    child.once("exit", (code) => resolve({ ...out, code })),
  );
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve) => {
      const check = () => {
        const match = out.stdout.match(pattern);
        if (!match) return;
        watchers.delete(check);
        resolve(match);
      };
      watchers.add(check);
      check();
    });
  return { done, waitFor, interrupt: () => child.kill("SIGINT") };
}

/** Runs `yiem` to its end. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return startCli(args, env).done;
}
