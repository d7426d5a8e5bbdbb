import type { ChildRun, YiemClient } from "@yiem/core/client";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars, formatJsonLine } from "../terminalText.js";
import { type Command, expectPositionals, parseListingArgs } from "./command.js";
import { formatTable } from "./workers.js";

const USAGE = "yiem tree <session> [--json]";

/** A child run with its own children, as `yiem tree` reads them. */
export interface ChildRunNode extends ChildRun {
  children: ChildRunNode[];
}

/** The trees under `sessionId`, read child by child (at most 1000 runs in all). */
async function readTree(
  client: YiemClient,
  sessionId: string,
  budget = { left: 1000 },
): Promise<ChildRunNode[]> {
  const children = await client.children(sessionId);
  const nodes: ChildRunNode[] = [];
  for (const child of children) {
    if (budget.left-- <= 0) break;
    nodes.push({ ...child, children: await readTree(client, child.sessionId, budget) });
  }
  return nodes;
}

/** A run's duration in seconds (up to now while it runs). */
function durationOf(child: ChildRun, now: number): string {
  return `${(((child.endedAt ?? now) - child.startedAt) / 1000).toFixed(1)}s`;
}

/** What a row says of a run's usage: model calls, tool calls, tokens. */
function usageOf(child: ChildRun): string {
  const u = child.usage;
  return u ? `${u.modelCalls} model, ${u.toolCalls} tool, ${u.totalTokens} tok` : "-";
}

/** The rows of the tree, each child indented two spaces under its parent. */
function treeRows(nodes: ChildRunNode[], depth: number, now: number): string[][] {
  return nodes.flatMap((node) => [
    [
      `${"  ".repeat(depth)}${node.agent}`,
      node.status,
      usageOf(node),
      durationOf(node, now),
      node.sessionId,
    ].map(escapeControlChars),
    ...treeRows(node.children, depth + 1, now),
  ]);
}

/**
 * The tree under a session as table lines: one row per child run (agent, indented under its
 * parent; status; usage; duration; session).
 */
export function treeLines(sessionId: string, nodes: ChildRunNode[], now = Date.now()): string[] {
  if (nodes.length === 0) return [`Session ${escapeControlChars(sessionId)} has no child runs.`];
  const header = ["AGENT", "STATUS", "USAGE", "DURATION", "SESSION"];
  return formatTable([header, ...treeRows(nodes, 0, now)]);
}

/** `yiem tree <session>`: the child runs under a session. */
export const treeCommand: Command = {
  name: "tree",
  summary:
    "Lists the child runs under a session (agents calling agents): agent, status, usage and duration, each child indented under its parent.",
  usage: USAGE,
  options: ["      --json         the tree as one JSON array (each run with its children)"],
  async run(args, io) {
    const parsed = parseListingArgs(treeCommand, args, io);
    if (!parsed) return EXIT.ok;
    const { json, positionals } = parsed;
    const [sessionId = ""] = expectPositionals(USAGE, positionals, ["session"]);
    const nodes = await withCluster(io.env, ({ client }) => readTree(client, sessionId));
    if (json) writeLine(io.stdout, formatJsonLine(nodes));
    else for (const line of treeLines(sessionId, nodes)) writeLine(io.stdout, line);
    return EXIT.ok;
  },
};
