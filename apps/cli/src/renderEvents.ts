import type { AgentEvent, AgentToolResult, MessageContent } from "@yiem/core";
import { createLiveLine, type LiveLine } from "./spinner.js";
import { escapeControlChars } from "./terminalText.js";

/** Extra facts a cluster event may carry: which worker produced it and when it was published. */
export interface EventOrigin {
  workerId?: string;
  /** Publish time (ms since epoch); durations use it when both ends of a call carry it. */
  ts?: number;
}

/** What `createEventRenderer` returns. */
export interface EventRenderer {
  /** Renders one event (tool lifecycle events; the others only refresh the live lines). */
  handle(event: AgentEvent, origin?: EventOrigin): void;
  /** Prints a permanent line above the live lines. */
  print(line: string): void;
  /** Clears the live lines. */
  stop(): void;
}

/** A running call; `name`, `args` and `progress` are display text, already escaped. */
interface RunningCall {
  name: string;
  args: string;
  receivedAt: number;
  ts?: number;
  progress?: string;
  workerId?: string;
}

/** Shortens text to one line of at most `max` characters. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The text of content blocks, other blocks as `[type]` (as is: escape it before printing). */
export function contentText(content: MessageContent[]): string {
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ");
}

/** Untrusted text as one line of at most `max` characters, its control characters escaped. */
function showText(text: string, max: number): string {
  return oneLine(escapeControlChars(text), max);
}

/** A call's progress: a string as is, anything else as JSON; escaped, at most 40 characters. */
function showProgress(partial: unknown): string {
  return showText(typeof partial === "string" ? partial : (JSON.stringify(partial) ?? ""), 40);
}

function onWorker(workerId: string | undefined): string {
  return workerId ? ` on ${escapeControlChars(workerId)}` : "";
}

/** ` 412 ms` since the call's start; nothing when its start was not seen. */
function took(call: RunningCall | undefined, origin: EventOrigin): string {
  if (!call) return "";
  if (call.ts !== undefined && origin.ts !== undefined)
    return ` ${Math.max(0, origin.ts - call.ts)} ms`;
  return ` ${Date.now() - call.receivedAt} ms`;
}

function callLine(call: RunningCall): string {
  const progress = call.progress ? ` — ${call.progress}` : "";
  return `${call.name}(${call.args})${onWorker(call.workerId)}${progress}`;
}

/**
 * Tracks running calls; each handler returns the permanent line the event calls for (only
 * a call's end on a TTY, also starts and progress elsewhere).
 */
function createCallTracker(tty: boolean) {
  const running = new Map<string, RunningCall>();
  const start = (id: string, name: string, args: unknown, origin: EventOrigin) => {
    const call = { name: escapeControlChars(name), args: showText(JSON.stringify(args) ?? "", 50) };
    running.set(id, { ...call, receivedAt: Date.now(), ...origin });
    return tty ? undefined : `→ ${call.name}(${call.args}) started`;
  };
  const update = (id: string, partial: unknown, origin: EventOrigin) => {
    const call = running.get(id);
    if (!call) return undefined;
    call.progress = showProgress(partial);
    call.workerId ??= origin.workerId;
    return tty ? undefined : `  … ${call.name}${onWorker(call.workerId)} ${call.progress}`;
  };
  const end = (
    id: string,
    name: string,
    result: AgentToolResult,
    isError: boolean,
    origin: EventOrigin,
  ) => {
    const call = running.get(id);
    running.delete(id);
    const where = onWorker(call?.workerId ?? origin.workerId);
    const args = call ? `(${call.args})` : "";
    const shown = `${escapeControlChars(name)}${args}${where}${took(call, origin)}`;
    return `${isError ? "✖" : "✔"} ${shown} — ${showText(contentText(result.content), 80)}`;
  };
  const lineFor = (event: AgentEvent, origin: EventOrigin): string | undefined => {
    if (event.type === "toolExecStart")
      return start(event.toolCallId, event.toolName, event.arguments, origin);
    if (event.type === "toolExecUpdate")
      return update(event.toolCallId, event.partialResult, origin);
    if (event.type === "toolExecEnd")
      return end(event.toolCallId, event.toolName, event.result, event.isError, origin);
    return undefined;
  };
  return { lineFor, liveLines: () => [...running.values()].map(callLine) };
}

/**
 * Renders tool lifecycle events for a terminal: a spinner line per running call with its
 * latest progress (and worker), then one permanent line per finished call with ✔/✖, the
 * worker that ran it (as seen on its progress events), its duration (from the events'
 * publish times when they carry them) and the start of its result. Off a TTY, starts and
 * progress are printed as plain lines instead of a spinner.
 */
export function createEventRenderer(out: NodeJS.WriteStream = process.stdout): EventRenderer {
  const live: LiveLine = createLiveLine(out);
  const calls = createCallTracker(out.isTTY === true);
  const handle = (event: AgentEvent, origin: EventOrigin = {}) => {
    const line = calls.lineFor(event, { workerId: origin.workerId, ts: origin.ts });
    live.set(calls.liveLines()); // first, so a finished call's spinner line is gone before its line
    if (line !== undefined) live.print(line);
  };
  return { handle, print: (line) => live.print(line), stop: () => live.stop() };
}
