import type { AgentEvent, AgentToolResult, MessageContent } from "@yiem/core";
import { createLiveLine, type LiveLine } from "./spinner.js";

/** Extra facts a cluster event may carry (which worker ran a call). */
export interface EventOrigin {
  workerId?: string;
}

interface RunningCall {
  name: string;
  args: string;
  startedAt: number;
  progress?: string;
  workerId?: string;
}

/** Shortens text to one line of at most `max` characters. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function resultText(result: AgentToolResult): string {
  return result.content
    .map((block: MessageContent) => (block.type === "text" ? block.text : `[${block.type}]`))
    .join(" ");
}

function describeProgress(partial: unknown): string {
  if (typeof partial === "string") return oneLine(partial, 40);
  return oneLine(JSON.stringify(partial) ?? "", 40);
}

/**
 * Renders tool lifecycle events for a terminal: a spinner line per running call with its
 * latest progress (and worker), then one permanent line per finished call with ✔/✖, its
 * duration and the start of its result. Returns the handler and a `stop` to call at the end.
 */
export function createEventRenderer(out: NodeJS.WriteStream = process.stdout) {
  const live: LiveLine = createLiveLine(out);
  const running = new Map<string, RunningCall>();
  const redraw = () =>
    live.set(
      [...running.values()].map((call) => {
        const where = call.workerId ? ` on ${call.workerId}` : "";
        return `${call.name}(${call.args})${where}${call.progress ? ` — ${call.progress}` : ""}`;
      }),
    );
  const handle = (event: AgentEvent, origin: EventOrigin = {}) => {
    if (event.type === "toolExecStart") {
      const args = oneLine(JSON.stringify(event.arguments), 50);
      running.set(event.toolCallId, {
        name: event.toolName,
        args,
        startedAt: Date.now(),
        workerId: origin.workerId,
      });
      if (!out.isTTY) live.print(`→ ${event.toolName}(${args}) started`);
    } else if (event.type === "toolExecUpdate") {
      const call = running.get(event.toolCallId);
      if (call) {
        call.progress = describeProgress(event.partialResult);
        call.workerId ??= origin.workerId;
        if (!out.isTTY) live.print(`  … ${call.name} ${call.progress}`);
      }
    } else if (event.type === "toolExecEnd") {
      const call = running.get(event.toolCallId);
      running.delete(event.toolCallId);
      const ms = call ? Date.now() - call.startedAt : 0;
      const where =
        (call?.workerId ?? origin.workerId) ? ` on ${call?.workerId ?? origin.workerId}` : "";
      const mark = event.isError ? "✖" : "✔";
      live.print(
        `${mark} ${event.toolName}(${call?.args ?? ""})${where} ${ms} ms — ${oneLine(resultText(event.result))}`,
      );
    }
    redraw();
  };
  return { handle, stop: () => live.stop() };
}
