import type { AgentToolResult, ToolArgs } from "../types/index.js";
import { type ChildEnd, runSandboxChild } from "./sandboxChild.js";
import { sandboxCommand } from "./sandboxCommand.js";
import {
  type ResolvedSandboxLimits,
  resolveSandboxLimits,
  type SandboxLimits,
} from "./sandboxLimits.js";
import type { HostReply, HostRequest } from "./sandboxProtocol.js";
import { toSandboxToolResult, withLogs } from "./sandboxResult.js";
import { sandboxSlots } from "./sandboxSlots.js";

/** What `runInSandbox` runs, with its limits (see `SandboxLimits` for the defaults). */
export interface SandboxRunOptions extends SandboxLimits {
  /** A JavaScript function body; it receives `args` and returns the result. */
  code: string;
  /** The call's arguments, given to the code as `args` (a JSON copy). Default `{}`. */
  args?: ToolArgs;
  /** Names the code in messages: `written tool <toolName> …`. */
  toolName?: string;
  /** The tool call this run serves, for the caller's records; the code never sees it. */
  toolCallId?: string;
  /** Aborting kills the child at once; the outcome is then an error. */
  signal?: AbortSignal;
  /** Called with the child's pid once it is spawned. */
  onStart?: (pid: number) => void;
}

/** How a sandbox run ended: a tool result, or an error text meant for the model. */
export type SandboxOutcome =
  | { kind: "ok"; result: AgentToolResult }
  | { kind: "error"; message: string };

type Reply = Exclude<HostReply, { kind: "ready" }>;

function labelOf(options: SandboxRunOptions): string {
  return options.toolName ? `written tool ${options.toolName}` : "sandboxed code";
}

function okOutcome(label: string, reply: Extract<Reply, { kind: "ok" }>): SandboxOutcome {
  let value: unknown;
  try {
    value = JSON.parse(reply.json);
  } catch {
    return { kind: "error", message: `${label} returned something that is not JSON` };
  }
  const result = toSandboxToolResult(value);
  if (typeof result === "string") {
    return { kind: "error", message: `${label} returned an invalid result: ${result}` };
  }
  return { kind: "ok", result: withLogs(result, reply.logs) };
}

function replyMessage(label: string, reply: Reply, limits: ResolvedSandboxLimits): string {
  switch (reply.kind) {
    case "timeout":
      return `${label} timed out after ${limits.timeoutMs} ms`;
    case "memory":
      return `${label} ran out of memory (limit ${limits.memoryBytes} bytes)`;
    case "threw":
      return `${label} threw: ${reply.message}`;
    case "notJson":
      return `${label} returned something that is not JSON (${reply.message})`;
    case "tooLarge":
      return `${label} returned a result of ${reply.size} characters (limit ${limits.maxResultChars})`;
    case "crashed":
      return `${label} failed inside its sandbox: ${reply.message}`;
    default:
      return `${label} ended without a result`;
  }
}

function endMessage(
  label: string,
  end: Exclude<ChildEnd, { kind: "replied" }>,
  limits: ResolvedSandboxLimits,
): string {
  if (end.kind === "spawnFailed") return `${label} could not start its sandbox: ${end.message}`;
  if (end.kind === "exited") {
    const how = end.signal ? `signal ${end.signal}` : `exit code ${end.code}`;
    return `${label} stopped unexpectedly (${how})${end.stderr ? `: ${end.stderr}` : ""}`;
  }
  switch (end.reason) {
    case "timeout":
      return `${label} timed out after ${limits.timeoutMs} ms`;
    case "startup":
      return `${label} could not start its sandbox within ${limits.startupTimeoutMs} ms`;
    case "output":
      return `${label} wrote more output than allowed (results up to ${limits.maxResultChars} characters)`;
    default:
      return `${label} was aborted`;
  }
}

function toOutcome(label: string, end: ChildEnd, limits: ResolvedSandboxLimits): SandboxOutcome {
  if (end.kind !== "replied") return { kind: "error", message: endMessage(label, end, limits) };
  if (end.reply.kind === "ok") return okOutcome(label, end.reply);
  return { kind: "error", message: replyMessage(label, end.reply, limits) };
}

function hostRequest(
  mode: HostRequest["mode"],
  code: string,
  argsJson: string,
  limits: ResolvedSandboxLimits,
): HostRequest {
  const { corePath, variantPath } = sandboxCommand();
  return {
    mode,
    code,
    argsJson,
    timeoutMs: limits.timeoutMs,
    memoryBytes: limits.memoryBytes,
    stackBytes: limits.stackBytes,
    maxResultChars: limits.maxResultChars,
    maxLogChars: limits.maxLogChars,
    corePath,
    variantPath,
  };
}

/**
 * Runs a JavaScript function body as `(function (args) { <code> })(args)` in QuickJS, inside a
 * short-lived child process with an empty environment, Node's permission model (no fs writes,
 * no child processes, reads of the QuickJS packages only), a capped WebAssembly memory, a stack
 * limit and an interrupt at `timeoutMs`; the parent SIGKILLs the child at `timeoutMs +
 * killGraceMs`. The code sees only `args` and a captured `console.log` (lines land in
 * `details.logs`). A returned string becomes text content, `{content, details}` is used as is,
 * any other JSON value becomes text of its JSON; a returned promise is settled first.
 * Never throws: every failure (timeout, memory, throw, non-JSON result, crash, abort) becomes
 * `{kind: "error", message}`, with messages like `written tool x timed out after 2000 ms`.
 *
 * @example
 * const outcome = await runInSandbox({ code: "return String(args.a + args.b)", args: { a: 1, b: 2 } });
 * // { kind: "ok", result: { content: [{ type: "text", text: "3" }], details: {} } }
 */
export async function runInSandbox(options: SandboxRunOptions): Promise<SandboxOutcome> {
  const label = labelOf(options);
  try {
    const limits = resolveSandboxLimits(options);
    const request = hostRequest("run", options.code, JSON.stringify(options.args ?? {}), limits);
    const release = await sandboxSlots().acquire();
    try {
      const end = await runSandboxChild(request, limits, options);
      return toOutcome(label, end, limits);
    } finally {
      release();
    }
  } catch (err) {
    return {
      kind: "error",
      message: `${label} could not run: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/**
 * Checks, in a sandbox child, that `code` compiles as a function body; none of it runs.
 * Returns the problem (e.g. `SyntaxError: unexpected token in expression: '}'`), or
 * `undefined` when it compiles. Never throws: a sandbox that fails is reported as a problem.
 */
export async function checkSandboxCode(
  code: string,
  limits: SandboxLimits = {},
): Promise<string | undefined> {
  try {
    const resolved = resolveSandboxLimits(limits);
    const end = await runSandboxChild(hostRequest("compile", code, "{}", resolved), resolved);
    if (end.kind === "replied" && end.reply.kind === "ok") return undefined;
    if (end.kind === "replied" && end.reply.kind === "threw") return end.reply.message;
    const outcome = toOutcome("the code", end, resolved);
    return outcome.kind === "error" ? outcome.message : undefined;
  } catch (err) {
    return `the code could not be checked: ${err instanceof Error ? err.message : String(err)}`;
  }
}
