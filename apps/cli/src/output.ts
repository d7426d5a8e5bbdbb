import type { AssistantMessage, BusEvent } from "@yiem/core";
import { contentText, createEventRenderer, oneLine } from "./renderEvents.js";

/** Prints bus events: JSON lines, or the live tool renderer plus run-level lines. */
export interface BusPrinter {
  event(event: BusEvent): void;
  /** A permanent human line (ignored in JSON mode, so stdout stays one JSON value a line). */
  print(line: string): void;
  stop(): void;
}

/** Options of `createBusPrinter`. */
export interface BusPrinterOptions {
  json: boolean;
  out: NodeJS.WriteStream;
  /** Also print run starts, user input and answers (for `watch`); tool events always print. */
  runEvents: boolean;
}

/** The answer text of a response (its text blocks). */
export function answerText(response: AssistantMessage): string {
  return response.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

/** True for the stop reasons the CLI treats as a failed run (exit code 1). */
export function isFailedRun(response: AssistantMessage): boolean {
  return response.stopReason === "error" || response.stopReason === "aborted";
}

/** `✔ stop in 1.2 s`, `✖ aborted in 3.0 s`, `✖ error in 0.4 s: <message>`. */
export function statusLine(response: AssistantMessage, ms?: number): string {
  const mark = isFailedRun(response) ? "✖" : "✔";
  const took = ms === undefined ? "" : ` in ${(ms / 1000).toFixed(1)} s`;
  const why = response.errorMessage ? `: ${oneLine(response.errorMessage, 200)}` : "";
  return `${mark} ${response.stopReason}${took}${why}`;
}

/** The lines that show a finished run: its answer, then its status. */
export function responseLines(response: AssistantMessage, ms?: number): string[] {
  const text = answerText(response);
  return ["", text || "(no answer text)", "", statusLine(response, ms)];
}

function jsonPrinter(out: NodeJS.WriteStream): BusPrinter {
  return {
    event: (event) => out.write(`${JSON.stringify(event)}\n`),
    print: () => undefined,
    stop: () => undefined,
  };
}

/** Creates the printer for `send` and `watch`. */
export function createBusPrinter(options: BusPrinterOptions): BusPrinter {
  if (options.json) return jsonPrinter(options.out);
  const renderer = createEventRenderer(options.out);
  const runStarts = new Map<string, number>();
  const runLine = (event: BusEvent): string[] => {
    if (event.type === "agentStart") {
      runStarts.set(event.runId, event.ts);
      return [`▶ run ${event.runId} started`];
    }
    if (event.type === "messageEnd" && event.message.role === "user")
      return [`> ${oneLine(contentText(event.message.content), 200)}`];
    if (event.type === "agentEnd") {
      const started = runStarts.get(event.runId);
      runStarts.delete(event.runId);
      return responseLines(event.response, started === undefined ? undefined : event.ts - started);
    }
    return [];
  };
  return {
    event(event) {
      renderer.handle(event, event);
      if (options.runEvents) for (const line of runLine(event)) renderer.print(line);
    },
    print: (line) => renderer.print(line),
    stop: () => renderer.stop(),
  };
}
