import { parseArgs } from "node:util";
import {
  type LimitedToolLoad,
  resolveAnnouncedTools,
  type ToolConflict,
  type WorkerInfo,
} from "@yiem/core/client";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars, formatJsonLine } from "../terminalText.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const USAGE = "yiem workers [--json]";

/** `3 s ago`, `2 min ago`. */
function ago(ms: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

/** Lays out rows as left-aligned columns separated by two spaces. */
export function formatTable(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

/**
 * The workers as table lines: id, queues, tool count, running/concurrency, last seen, host.
 * What workers registered is shown with its control characters escaped, never raw.
 */
export function workerTable(workers: WorkerInfo[], now = Date.now()): string[] {
  const header = ["WORKER", "QUEUES", "TOOLS", "RUNNING", "LAST SEEN", "HOST"];
  const rows = workers.map((w) =>
    [
      w.workerId,
      w.queues.join(","),
      String(w.tools.length),
      `${w.running}/${w.concurrency}`,
      ago(w.lastSeen, now),
      `${w.hostname}:${w.pid}`,
    ].map(escapeControlChars),
  );
  return formatTable([header, ...rows]);
}

/** What the DEFINITION column says of a tool: `same`, or whose definition is used. */
function definitionCell(conflict: ToolConflict | undefined): string {
  if (!conflict) return "same";
  const groups = conflict.definitions.map((d) => [...d.workers].sort().join(",")).join(" | ");
  return `CONFLICT (${groups}): ${conflict.chosen.workerId}'s is used (started last)`;
}

/**
 * The tools the workers announce as table lines: tool, the workers announcing it (sorted), and
 * whether they agree on its definition (`same`), or, for a conflict, which workers announce
 * which definition and whose the cluster uses (`resolveAnnouncedTools`: the most recently
 * started worker's). Escaped like the worker table.
 */
export function toolTable(workers: WorkerInfo[]): string[] {
  const { conflicts } = resolveAnnouncedTools(workers);
  const byTool = new Map<string, string[]>();
  for (const w of workers) {
    for (const tool of w.tools) byTool.set(tool, [...(byTool.get(tool) ?? []), w.workerId]);
  }
  const header = ["TOOL", "WORKERS", "DEFINITION"];
  const rows = [...byTool].map(([tool, ids]) =>
    [tool, [...ids].sort().join(","), definitionCell(conflicts.find((c) => c.tool === tool))].map(
      escapeControlChars,
    ),
  );
  return formatTable([header, ...rows]);
}

/** The limited tools as table lines: tool, its queue, calls waiting, calls running. */
export function limitedToolTable(loads: LimitedToolLoad[]): string[] {
  const header = ["LIMITED TOOL", "QUEUE", "WAITING", "RUNNING"];
  const rows = loads.map((l) =>
    [l.tool, l.queue, String(l.waiting), String(l.running)].map(escapeControlChars),
  );
  return formatTable([header, ...rows]);
}

/** `yiem workers`: the live tool workers. */
export const workersCommand: Command = {
  name: "workers",
  summary:
    "Lists the live tool workers (id, queues, tools, running/concurrency, last seen), the tools they announce (and which workers disagree on a tool's definition), then the calls waiting and running per limited tool.",
  usage: USAGE,
  options: ["      --json         the workers as one JSON array"],
  async run(args, io) {
    const { values, positionals } = parseOrUsage(USAGE, () =>
      parseArgs({
        args,
        options: {
          json: { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (values.help) {
      writeLine(io.stdout, commandHelp(workersCommand));
      return EXIT.ok;
    }
    expectPositionals(USAGE, positionals, []);
    const [workers, limited] = await withCluster(io.env, ({ client }) =>
      Promise.all([client.workers(), client.limitedToolLoad()]),
    );
    if (values.json) writeLine(io.stdout, formatJsonLine(workers));
    else if (workers.length === 0)
      writeLine(io.stdout, "No live workers (start one: npm run worker).");
    else for (const line of workerTable(workers)) writeLine(io.stdout, line);
    if (!values.json && workers.length > 0) {
      writeLine(io.stdout, "");
      for (const line of toolTable(workers)) writeLine(io.stdout, line);
    }
    if (!values.json && limited.length > 0) {
      writeLine(io.stdout, "");
      for (const line of limitedToolTable(limited)) writeLine(io.stdout, line);
    }
    return EXIT.ok;
  },
};
