import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Writes an agents file (`YIEM_AGENTS`) of these YAML lines into a fresh temporary folder and
 * returns its path.
 *
 * @example const file = writeAgentsYaml(["agents:", "  lead:", "    instructions: You lead."]);
 */
export function writeAgentsYaml(lines: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "yiem-agents-")), "agents.yaml");
  writeFileSync(path, lines.join("\n"));
  return path;
}

/**
 * Writes the agents file of a two-agent tree: `lead` (no tools of its own) may call `helper`,
 * which has `helperTools`. Returns its path.
 *
 * @example const file = writeLeadAndHelperYaml(["ledgerRemote"]);
 */
export function writeLeadAndHelperYaml(helperTools: string[]): string {
  return writeAgentsYaml([
    "agents:",
    "  lead:",
    "    instructions: You lead.",
    "    model: lead-model",
    "    tools: []",
    "    agents: [helper]",
    "  helper:",
    "    instructions: You help.",
    "    description: Helps.",
    "    model: helper-model",
    `    tools: [${helperTools.join(", ")}]`,
  ]);
}
