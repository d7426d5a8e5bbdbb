import { type ChildProcess, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { sandboxCommand } from "./sandboxCommand.js";
import type { ResolvedSandboxLimits } from "./sandboxLimits.js";
import { type HostReply, type HostRequest, parseHostReply } from "./sandboxProtocol.js";

/** Why the parent killed a child. */
export type KillReason = "timeout" | "startup" | "output" | "aborted";

/** How a child ended, as the parent saw it. */
export type ChildEnd =
  | { kind: "replied"; reply: Exclude<HostReply, { kind: "ready" }> }
  | { kind: "killed"; reason: KillReason }
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: "spawnFailed"; message: string };

/** Hooks of one child. */
export interface ChildHooks {
  signal?: AbortSignal;
  /** Called with the child's pid once it is spawned (tests, monitoring). */
  onStart?: (pid: number) => void;
}

const STDERR_KEEP = 2000;

/** Watches one child: its stdout lines, its timers, its output cap and its end. */
class ChildWatch {
  private reply: ChildEnd | undefined;
  private killedFor: KillReason | undefined;
  private stdout = "";
  private readonly decoder = new StringDecoder("utf8");
  private stdoutBytes = 0;
  private stderr = "";
  private timer: NodeJS.Timeout | undefined;
  private readonly outputCap: number;

  constructor(
    private readonly child: ChildProcess,
    private readonly limits: ResolvedSandboxLimits,
  ) {
    this.outputCap = 6 * (limits.maxResultChars + limits.maxLogChars) + 64 * 1024;
  }

  /** Starts the startup timer and listens to the child's output. */
  start(): void {
    this.arm(this.limits.startupTimeoutMs, "startup");
    this.child.stdout?.on("data", (chunk: Buffer) => this.onStdout(chunk));
    this.child.stderr?.on("data", (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEEP) this.stderr += chunk.toString("utf8");
    });
  }

  kill(reason: KillReason): void {
    if (this.reply || this.killedFor) return;
    this.killedFor = reason;
    this.child.kill("SIGKILL");
  }

  /** What ended the child, once it has exited and its output is read. */
  end(code: number | null, signal: NodeJS.Signals | null): ChildEnd {
    clearTimeout(this.timer);
    if (this.reply) return this.reply;
    if (this.killedFor) return { kind: "killed", reason: this.killedFor };
    return { kind: "exited", code, signal, stderr: this.stderr.slice(0, STDERR_KEEP).trim() };
  }

  /** Stops the timers (the child is gone). */
  dispose(): void {
    clearTimeout(this.timer);
  }

  private arm(ms: number, reason: KillReason): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kill(reason), ms);
  }

  private onStdout(chunk: Buffer): void {
    this.stdoutBytes += chunk.length;
    if (this.stdoutBytes > this.outputCap) {
      this.kill("output");
      return;
    }
    this.stdout += this.decoder.write(chunk);
    for (let at = this.stdout.indexOf("\n"); at >= 0; at = this.stdout.indexOf("\n")) {
      const line = this.stdout.slice(0, at);
      this.stdout = this.stdout.slice(at + 1);
      this.onLine(line);
    }
  }

  private onLine(line: string): void {
    const reply = parseHostReply(line);
    if (!reply || this.reply || this.killedFor) return;
    if (reply.kind === "ready") {
      this.arm(this.limits.timeoutMs + this.limits.killGraceMs, "timeout");
      return;
    }
    clearTimeout(this.timer);
    this.reply = { kind: "replied", reply };
  }
}

function spawnChild(): ChildProcess {
  const command = sandboxCommand();
  return spawn(command.executable, command.args, {
    cwd: command.cwd,
    env: {}, // nothing of this process's environment reaches the child
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
  });
}

/**
 * Runs one sandbox child to its end: sends `request` on its stdin, kills it with SIGKILL when
 * it takes longer than `startupTimeoutMs` to load, longer than `timeoutMs + killGraceMs` to
 * run, writes more than its output cap, or when `signal` aborts. Never throws or rejects.
 */
export function runSandboxChild(
  request: HostRequest,
  limits: ResolvedSandboxLimits,
  hooks: ChildHooks = {},
): Promise<ChildEnd> {
  if (hooks.signal?.aborted) return Promise.resolve({ kind: "killed", reason: "aborted" });
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawnChild();
    } catch (err) {
      resolve({ kind: "spawnFailed", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    const watch = new ChildWatch(child, limits);
    const onAbort = () => watch.kill("aborted");
    hooks.signal?.addEventListener("abort", onAbort, { once: true });
    let settled = false;
    const settle = (end: ChildEnd) => {
      if (settled) return;
      settled = true;
      watch.dispose();
      hooks.signal?.removeEventListener("abort", onAbort);
      resolve(end);
    };
    child.once("error", (err) => settle({ kind: "spawnFailed", message: err.message }));
    child.once("close", (code, signal) => settle(watch.end(code, signal)));
    watch.start();
    child.stdin?.on("error", () => undefined); // a child that died early closes its stdin
    child.stdin?.end(JSON.stringify(request));
    if (child.pid !== undefined) notifyStart(hooks, child.pid);
  });
}

function notifyStart(hooks: ChildHooks, pid: number): void {
  try {
    hooks.onStart?.(pid);
  } catch {
    // a failing observer must not break the run
  }
}
