import type { AssistantMessage, BusEvent } from "@yiem/core/client";
import { contentText, createEventRenderer, type EventRenderer, oneLine } from "./renderEvents.js";
import { escapeControlChars, formatJsonLine } from "./terminalText.js";
import { treeEventLine } from "./treeEvents.js";

/** Prints bus events: JSON lines, or the live tool renderer plus run-level lines. */
export interface BusPrinter {
  event(event: BusEvent): void;
  /** A permanent human line (ignored in JSON mode, so stdout stays one JSON value a line). */
  print(line: string): void;
  /** The status spinning on a TTY while nothing else happens (ignored in JSON mode). */
  status(text: string | undefined): void;
  /** True when `response`'s text was printed already, streamed as the model wrote it. */
  answerShown(response: AssistantMessage): boolean;
  /** The workers running the calls shown (none in JSON mode). */
  workersInUse(): string[];
  /** Tells which workers are alive and which drain (see `EventRenderer.checkWorkers`). */
  checkWorkers(live: ReadonlySet<string>, draining?: ReadonlySet<string>): void;
  stop(): void;
}

/** Options of `createBusPrinter`. */
export interface BusPrinterOptions {
  json: boolean;
  out: NodeJS.WriteStream;
  /** Also print run starts, user input and answers (for `watch`); tool events always print. */
  runEvents: boolean;
}

/** The answer text of a response (its text blocks), as is: escape it before printing. */
export function answerText(response: AssistantMessage): string {
  return response.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

/** True for the stop reasons the CLI treats as a failed run (exit code 1). */
export function isFailedRun(response: AssistantMessage): boolean {
  return response.stopReason === "error" || response.stopReason === "aborted";
}

/**
 * `✔ stop in 1.2 s`, `✖ aborted in 3.0 s`, `✖ error in 0.4 s: <message>`; the stop reason and
 * the message have their control characters escaped, never printed raw.
 */
export function statusLine(response: AssistantMessage, ms?: number): string {
  const mark = isFailedRun(response) ? "✖" : "✔";
  const took = ms === undefined ? "" : ` in ${(ms / 1000).toFixed(1)} s`;
  const message = response.errorMessage && escapeControlChars(response.errorMessage);
  const why = message ? `: ${oneLine(message, 200)}` : "";
  return `${mark} ${escapeControlChars(String(response.stopReason))}${took}${why}`;
}

/**
 * The lines that show a finished run: its answer (control characters escaped, newlines and
 * tabs kept), then its status; only the status when the answer was shown already (streamed).
 * Never passes the model's text to the terminal raw.
 */
export function responseLines(response: AssistantMessage, ms?: number, shown = false): string[] {
  if (shown) return ["", statusLine(response, ms)];
  const text = escapeControlChars(answerText(response));
  return ["", text || "(no answer text)", "", statusLine(response, ms)];
}

function jsonPrinter(out: NodeJS.WriteStream): BusPrinter {
  return {
    event: (event) => out.write(`${formatJsonLine(event)}\n`),
    print: () => undefined,
    status: () => undefined,
    answerShown: () => false,
    workersInUse: () => [],
    checkWorkers: () => undefined,
    stop: () => undefined,
  };
}

/**
 * Prints the answer text of each LLM call as it streams in, after a blank line, its control
 * characters escaped; remembers the text of the latest call so the answer is not printed twice.
 */
function createTextStream(renderer: EventRenderer) {
  let text = ""; // what the current LLM call has streamed so far
  return {
    /** A new LLM call begins: its text starts afresh. */
    restart() {
      text = "";
    },
    add(delta: string) {
      if (!text) renderer.print("");
      text += delta;
      renderer.write(escapeControlChars(delta));
    },
    /** True when `response`'s text is exactly what the latest call streamed. */
    showed: (response: AssistantMessage) => text !== "" && answerText(response) === text,
  };
}

/**
 * Creates the printer for `send` and `watch`. Text from the session (answers, user input,
 * tool names, arguments, results, errors) is printed with its control characters escaped,
 * in JSON mode as `\u00XX`; only the CLI's own sequences (the spinner) reach the terminal.
 * Answer text the model streams is printed as it comes (`messageUpdate`); an answer printed
 * that way is not printed again (see `answerShown`).
 */
export function createBusPrinter(options: BusPrinterOptions): BusPrinter {
  if (options.json) return jsonPrinter(options.out);
  const renderer = createEventRenderer(options.out);
  const text = createTextStream(renderer);
  const runStarts = new Map<string, number>();
  const runLine = (event: BusEvent): string[] => {
    if (event.type === "agentStart") {
      runStarts.set(event.runId, event.ts);
      return [`▶ run ${escapeControlChars(event.runId)} started`];
    }
    if (event.type === "messageEnd" && event.message.role === "user")
      return [`> ${oneLine(escapeControlChars(contentText(event.message.content)), 200)}`];
    if (event.type === "agentEnd") {
      const started = runStarts.get(event.runId);
      runStarts.delete(event.runId);
      const ms = started === undefined ? undefined : event.ts - started;
      return responseLines(event.response, ms, text.showed(event.response));
    }
    return [];
  };
  return {
    event(event) {
      if (event.path) {
        const line = treeEventLine(event); // a child run's event, seen at its root
        if (line) renderer.print(line);
        return;
      }
      if (event.type === "agentStart" || event.type === "turnStart") text.restart();
      renderer.handle(event, event);
      if (event.type === "messageUpdate") text.add(event.delta);
      if (options.runEvents) for (const line of runLine(event)) renderer.print(line);
    },
    print: (line) => renderer.print(line),
    status: (status) => renderer.setStatus(status),
    answerShown: (response) => text.showed(response),
    workersInUse: () => renderer.workersInUse(),
    checkWorkers: (live, draining) => renderer.checkWorkers(live, draining),
    stop: () => renderer.stop(),
  };
}
