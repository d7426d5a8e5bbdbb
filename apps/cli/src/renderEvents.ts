import type { AgentEvent, AgentToolResult, MessageContent } from "@yiem/core/client";
import { createLiveLine, type LiveLine } from "./spinner.js";
import { escapeControlChars } from "./terminalText.js";

/** Extra facts a cluster event may carry: which worker produced it and when it was published. */
export interface EventOrigin {
  workerId?: string;
  /** Publish time (ms since epoch); durations use it when both ends of a call carry it. */
  ts?: number;
  /** The session (named in the approve / deny hint of a call awaiting approval). */
  sessionId?: string;
}

/** What `createEventRenderer` returns. */
export interface EventRenderer {
  /** Renders one event (tool lifecycle events; the others only refresh the live lines). */
  handle(event: AgentEvent, origin?: EventOrigin): void;
  /** Prints a permanent line above the live lines. */
  print(line: string): void;
  /** Writes display text (already escaped) as it comes, without ending its line. */
  write(text: string): void;
  /** Sets the status shown (on a TTY, with a spinner) while no call runs; none clears it. */
  setStatus(status: string | undefined): void;
  /** The workers running the calls shown, as far as their events told. */
  workersInUse(): string[];
  /**
   * Tells which workers are alive and which of them drain: a call whose worker is gone gets a
   * "waiting for" line, one whose worker drains (SIGTERM) a line saying it finishes there.
   */
  checkWorkers(live: ReadonlySet<string>, draining?: ReadonlySet<string>): void;
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
  /** The worker running it, as its events tell (raw: escape before printing). */
  workerId?: string;
  /** Its worker, once found gone from the worker registry. */
  stoppedWorker?: string;
  /** Its worker, once found draining (it finishes its calls, then stops). */
  drainingWorker?: string;
  /** The worker it ran on before it was retried on `workerId`. */
  formerWorker?: string;
  /** How long it waited for an approval (its duration counts from the decision). */
  waitedMs?: number;
}

/** The status while the coordinator waits for the model's answer. */
export const WAITING_FOR_MODEL = "waiting for the model…";

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

/** Milliseconds from the call's start (or its approval) to `origin`'s event. */
function sinceStart(call: RunningCall, origin: EventOrigin): number {
  if (call.ts !== undefined && origin.ts !== undefined) return Math.max(0, origin.ts - call.ts);
  return Date.now() - call.receivedAt;
}

/**
 * ` 412 ms` since the call started running (after its approval, if it waited for one, with
 * ` after 3210 ms awaiting approval`); nothing when its start was not seen.
 */
function took(call: RunningCall | undefined, origin: EventOrigin): string {
  if (!call) return "";
  const waited = call.waitedMs !== undefined ? ` after ${call.waitedMs} ms awaiting approval` : "";
  return ` ${sinceStart(call, origin)} ms${waited}`;
}

/** A call decided on: its wait is kept apart, and its duration counts from now. */
function markDecided(call: RunningCall | undefined, origin: EventOrigin): void {
  if (!call) return;
  call.waitedMs = sinceStart(call, origin);
  call.ts = origin.ts;
  call.receivedAt = Date.now();
}

/** The live line of a running call. */
function callLine(call: RunningCall): string {
  const shown = `${call.name}(${call.args})`;
  if (call.stoppedWorker) {
    const worker = escapeControlChars(call.stoppedWorker);
    return `waiting for ${shown}: ${worker} stopped, another worker takes it over…`;
  }
  const progress = call.progress ? ` — ${call.progress}` : "…";
  return `running ${shown}${onWorker(call.workerId)}${progress}`;
}

/** ` after worker-1 stopped`, for a call that another worker finished. */
function afterStopped(call: RunningCall | undefined, finishedOn: string | undefined): string {
  const before =
    call?.workerId && finishedOn && call.workerId !== finishedOn
      ? call.workerId
      : call?.formerWorker;
  return before ? ` after ${escapeControlChars(before)} stopped` : "";
}

/** Notes the worker of a call's latest event; a new worker means the call was retried there. */
function followWorker(call: RunningCall, workerId: string | undefined): string[] {
  if (!workerId || workerId === call.workerId) {
    call.stoppedWorker = undefined; // it spoke again: alive after all
    return [];
  }
  if (!call.workerId) {
    call.workerId = workerId;
    return [];
  }
  const line = `↻ ${call.name}(${call.args}) retried${onWorker(workerId)}${afterStopped(call, workerId)}`;
  call.formerWorker = call.workerId;
  call.workerId = workerId;
  call.stoppedWorker = undefined;
  return [line];
}

/**
 * Tracks running calls; each handler returns the permanent lines the event calls for (a
 * call's end, its retry on another worker; on a TTY nothing else, elsewhere also starts and
 * progress).
 */
function createCallTracker(tty: boolean) {
  const running = new Map<string, RunningCall>();
  /** Calls awaiting a decision, out of `running` (nothing of theirs runs meanwhile). */
  const parked = new Map<string, RunningCall>();
  /** An approved call runs again, timed from now, its wait kept apart; a denied one is done. */
  const resume = (id: string, approved: boolean, origin: EventOrigin) => {
    const call = parked.get(id);
    parked.delete(id);
    if (!call || !approved) return;
    markDecided(call, origin);
    running.set(id, call);
  };
  const start = (id: string, name: string, args: unknown, origin: EventOrigin) => {
    const call = { name: escapeControlChars(name), args: showText(JSON.stringify(args) ?? "", 50) };
    running.set(id, { ...call, receivedAt: Date.now(), ...origin });
    return tty ? [] : [`→ ${call.name}(${call.args}) started`];
  };
  const update = (id: string, partial: unknown, origin: EventOrigin) => {
    const call = running.get(id);
    if (!call) return [];
    call.progress = showProgress(partial);
    const lines = followWorker(call, origin.workerId);
    if (!tty) lines.push(`  … ${call.name}${onWorker(call.workerId)} ${call.progress}`);
    return lines;
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
    const finishedOn = origin.workerId ?? call?.workerId; // the end names the worker whose result it is
    const where = `${onWorker(finishedOn)}${afterStopped(call, finishedOn)}`;
    const args = call ? `(${call.args})` : "";
    const shown = `${escapeControlChars(name)}${args}${where}${took(call, origin)}`;
    return [`${isError ? "✖" : "✔"} ${shown} — ${showText(contentText(result.content), 80)}`];
  };
  const awaiting = (
    event: Extract<AgentEvent, { type: "toolApprovalRequested" }>,
    origin: EventOrigin,
  ) => {
    const call = running.get(event.toolCallId);
    running.delete(event.toolCallId); // parked: nothing runs until a decision
    if (call) parked.set(event.toolCallId, call);
    const args = showText(JSON.stringify(event.arguments) ?? "", 50);
    const target = escapeControlChars(`${origin.sessionId ?? "SESSION"} ${event.callKey}`);
    return [
      `⏸ ${escapeControlChars(event.toolName)}(${args}) awaits approval: ${showText(event.reason, 80)} — yiem approve ${target} / yiem deny ${target}`,
    ];
  };
  const decided = (event: Extract<AgentEvent, { type: "toolApprovalDecided" }>) => {
    const name = escapeControlChars(event.toolName);
    const by = event.by ? ` by ${showText(event.by, 40)}` : "";
    if (event.approved) return [`▶ ${name} approved${by}: its run resumes`];
    return [`⊘ ${name} denied${by}: ${showText(event.reason ?? "no reason given", 80)}`];
  };
  const linesFor = (event: AgentEvent, origin: EventOrigin): string[] => {
    if (event.type === "toolExecStart")
      return start(event.toolCallId, event.toolName, event.arguments, origin);
    if (event.type === "toolExecUpdate")
      return update(event.toolCallId, event.partialResult, origin);
    if (event.type === "toolExecEnd")
      return end(event.toolCallId, event.toolName, event.result, event.isError, origin);
    if (event.type === "toolApprovalRequested") return awaiting(event, origin);
    if (event.type === "toolApprovalDecided") {
      resume(event.toolCallId, event.approved, origin);
      return decided(event);
    }
    if (event.type === "agentHandoff")
      return [
        `⇄ handed over from ${escapeControlChars(event.from)} to ${escapeControlChars(event.to)}: it answers from here on`,
      ];
    return [];
  };
  /**
   * Flags the calls whose worker is gone (a "waiting for" line each) or drains (a line saying
   * the call finishes there, once per worker). A worker seen draining that is then gone
   * finished its calls before it withdrew: nothing is flagged.
   */
  const checkWorkers = (live: ReadonlySet<string>, draining: ReadonlySet<string> = new Set()) =>
    [...running.values()].flatMap((call) => {
      const worker = call.workerId;
      if (!worker || call.stoppedWorker === worker) return [];
      if (live.has(worker)) {
        if (!draining.has(worker) || call.drainingWorker === worker) return [];
        call.drainingWorker = worker;
        return [
          `… ${escapeControlChars(worker)} is draining (shutting down): it finishes ${call.name}(${call.args}) before it stops`,
        ];
      }
      // Seen draining, then gone: it withdrew once its calls ended, and the end of this one is
      // on its way (the coordinator relays it after the worker withdrew, on a loaded machine).
      if (call.drainingWorker === worker) return [];
      call.stoppedWorker = worker;
      const shown = `${call.name}(${call.args})`;
      return [
        `… waiting for ${escapeControlChars(worker)}: it stopped while running ${shown}; the call goes to another worker once its lock expires`,
      ];
    });
  const workersInUse = () =>
    [...running.values()].flatMap((call) =>
      call.workerId && call.stoppedWorker !== call.workerId ? [call.workerId] : [],
    );
  return {
    linesFor,
    checkWorkers,
    workersInUse,
    liveLines: () => [...running.values()].map(callLine),
  };
}

/** The status an event leaves: the model is at work after a start, done once it answers. */
function statusAfter(event: AgentEvent, status: string | undefined): string | undefined {
  if (event.type === "agentStart" || event.type === "turnStart") return WAITING_FOR_MODEL;
  if (event.type === "messageUpdate" || event.type === "agentEnd") return undefined;
  if (event.type === "messageEnd" && event.message.role === "assistant") return undefined;
  return status;
}

/**
 * Renders tool lifecycle events for a terminal: a spinner line per running call with its
 * latest progress (and worker), then one permanent line per finished call with ✔/✖, the
 * worker that ran it (after the one that stopped, when it was retried), its duration (from
 * the events' publish times when they carry them) and the start of its result. A call that
 * moves to another worker gets a ↻ line. While no call runs, a status line ("waiting for the
 * model…", or what `setStatus` set) spins instead. Off a TTY, starts and progress are printed
 * as plain lines instead of a spinner, and no status is shown.
 */
export function createEventRenderer(out: NodeJS.WriteStream = process.stdout): EventRenderer {
  const live: LiveLine = createLiveLine(out);
  const calls = createCallTracker(out.isTTY === true);
  let status: string | undefined;
  const refresh = () => {
    const lines = calls.liveLines();
    live.set(lines.length > 0 || !status ? lines : [status]);
  };
  const printAll = (lines: string[]) => {
    for (const line of lines) live.print(line);
  };
  const handle = (event: AgentEvent, origin: EventOrigin = {}) => {
    const lines = calls.linesFor(event, {
      workerId: origin.workerId,
      ts: origin.ts,
      sessionId: origin.sessionId,
    });
    status = statusAfter(event, status);
    refresh(); // first, so a finished call's spinner line is gone before its line
    printAll(lines);
  };
  return {
    handle,
    print: (line) => live.print(line),
    write: (text) => live.write(text),
    setStatus(next) {
      status = next;
      refresh();
    },
    workersInUse: () => calls.workersInUse(),
    checkWorkers(liveWorkers, draining) {
      const lines = calls.checkWorkers(liveWorkers, draining);
      refresh();
      printAll(lines);
    },
    stop: () => live.stop(),
  };
}
