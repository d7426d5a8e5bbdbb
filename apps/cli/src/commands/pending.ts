import type { PendingApproval } from "@yiem/core/client";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars, formatJsonLine } from "../terminalText.js";
import { type Command, expectAtMostPositionals, parseListingArgs } from "./command.js";
import { formatTable } from "./workers.js";

const USAGE = "yiem pending [SESSION] [--json]";

/** `42 s`, `3 min`. */
function age(since: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - since) / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

/** A call's chain from its tree's root as the agents on the way (`lead > researcher`), `-` for a root's call. */
function chainOf(pending: PendingApproval): string {
  return pending.chain?.map((link) => link.agent ?? link.sessionId).join(" > ") ?? "-";
}

/**
 * The calls awaiting approval as table lines: session, call, tool, reason, age, and for a call
 * in a child run the agents from the root to it (the column shows only when one is).
 */
export function pendingTable(pending: PendingApproval[], now = Date.now()): string[] {
  const chained = pending.some((p) => p.chain);
  const header = ["SESSION", "CALL", "TOOL", "REASON", "AGE", ...(chained ? ["CHAIN"] : [])];
  const rows = pending.map((p) =>
    [
      p.sessionId,
      p.callKey,
      p.toolName,
      p.reason,
      age(p.requestedAt, now),
      ...(chained ? [chainOf(p)] : []),
    ].map(escapeControlChars),
  );
  return formatTable([header, ...rows]);
}

/** `yiem pending`: the tool calls awaiting approval. */
export const pendingCommand: Command = {
  name: "pending",
  summary:
    "Lists the tool calls awaiting approval (session, call, tool, reason, age; for a call in a child run, the agents from the root), of one session and its child runs, or of the whole cluster.",
  usage: USAGE,
  options: ["      --json         the calls as one JSON array"],
  async run(args, io) {
    const parsed = parseListingArgs(pendingCommand, args, io);
    if (!parsed) return EXIT.ok;
    const { json, positionals } = parsed;
    expectAtMostPositionals(USAGE, positionals, 1);
    const pending = await withCluster(io.env, ({ client }) =>
      client.pendingApprovals(positionals[0]),
    );
    if (json) writeLine(io.stdout, formatJsonLine(pending));
    else if (pending.length === 0) writeLine(io.stdout, "No tool call awaits approval.");
    else for (const line of pendingTable(pending)) writeLine(io.stdout, line);
    return EXIT.ok;
  },
};
