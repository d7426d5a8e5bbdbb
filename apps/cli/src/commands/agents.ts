import type { AgentAnnouncement } from "@yiem/core/client";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars, formatJsonLine } from "../terminalText.js";
import { type Command, expectPositionals, parseListingArgs } from "./command.js";
import { formatTable } from "./workers.js";

const USAGE = "yiem agents [--json]";

/** One row per agent of any running coordinator: which coordinators serve it, with which model and tools. */
interface AgentRow {
  name: string;
  model: string;
  tools: string;
  coordinators: string[];
}

/** The agents of every announcement, by name then definition (two definitions of a name: two rows). */
function agentRows(announcements: AgentAnnouncement[]): AgentRow[] {
  const rows = new Map<string, AgentRow>();
  for (const announcement of announcements) {
    for (const agent of announcement.agents) {
      const tools = agent.tools ? agent.tools.join(",") || "(none)" : "(all)";
      const key = JSON.stringify([agent.name, agent.model, tools]);
      const row = rows.get(key) ?? {
        name: agent.name,
        model: agent.model,
        tools,
        coordinators: [],
      };
      row.coordinators.push(announcement.coordinatorId);
      rows.set(key, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The agents as table lines (name, model, tools, coordinators serving them), then a warning
 * when the coordinators' definitions differ (their digests), naming each coordinator's digest.
 */
export function agentLines(announcements: AgentAnnouncement[]): string[] {
  const header = ["AGENT", "MODEL", "TOOLS", "COORDINATORS"];
  const rows = agentRows(announcements).map((row) =>
    [row.name, row.model, row.tools, row.coordinators.join(",")].map(escapeControlChars),
  );
  const lines = formatTable([header, ...rows]);
  const digests = new Set(announcements.map((a) => a.digest));
  if (digests.size <= 1) return lines;
  return [
    ...lines,
    "",
    "warning: the coordinators disagree on the agent definitions (YIEM_AGENTS differs):",
    ...announcements.map((a) => escapeControlChars(`  ${a.coordinatorId}  digest ${a.digest}`)),
  ];
}

/** `yiem agents`: the agents the running coordinators serve. */
export const agentsCommand: Command = {
  name: "agents",
  summary:
    "Lists the agents the running coordinators serve (name, model, tools, which coordinators serve each), and warns when their definitions differ.",
  usage: USAGE,
  options: ["      --json         the coordinators' announcements as one JSON array"],
  async run(args, io) {
    const parsed = parseListingArgs(agentsCommand, args, io);
    if (!parsed) return EXIT.ok;
    const { json, positionals } = parsed;
    expectPositionals(USAGE, positionals, []);
    const announcements = await withCluster(io.env, ({ client }) => client.agents());
    if (json) writeLine(io.stdout, formatJsonLine(announcements));
    else if (announcements.length === 0)
      writeLine(io.stdout, "No running coordinators (start one: npm run coordinator).");
    else for (const line of agentLines(announcements)) writeLine(io.stdout, line);
    return EXIT.ok;
  },
};
