import { readFile } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { YiemError } from "../errors/yiemError.js";
import { type AgentDefinition, defineAgent, InvalidAgentError } from "./defineAgent.js";

/** A `YIEM_AGENTS` file that cannot be read or breaks a rule: names the file (and the agent and field). Terminal. */
export class AgentsFileError extends YiemError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = "AgentsFileError";
  }
}

/** The fields an agent may have in a data file (`llmCall` and function instructions are code only). */
const FILE_FIELDS = new Set([
  "instructions",
  "model",
  "modelSettings",
  "baseURL",
  "apiKeyEnv",
  "tools",
  "maxTurns",
  "outputSchema",
  "outputRetries",
  "budget",
  "description",
  "handoffs",
  "inputSchema",
  "agents",
]);

const MODULE_EXTENSIONS = new Set([".ts", ".mts", ".js", ".mjs"]);
const DATA_EXTENSIONS = new Set([".json", ".yaml", ".yml"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads the file's contents: parsed JSON / YAML, or a module's `agents` (else default) export. */
async function readContents(path: string): Promise<unknown> {
  const ext = extname(path).toLowerCase();
  if (MODULE_EXTENSIONS.has(ext)) {
    const mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
    return mod.agents !== undefined ? { agents: mod.agents } : mod.default;
  }
  if (!DATA_EXTENSIONS.has(ext))
    throw new Error("must end in .json, .yaml, .yml, .ts, .mts, .js or .mjs");
  const text = await readFile(path, "utf8");
  if (ext === ".json") return JSON.parse(text);
  const { parse: parseYaml } = await import("yaml"); // loaded for a YAML file only
  return parseYaml(text);
}

/** One entry of `agents` as a definition, its fields checked against `FILE_FIELDS` in data files. */
function toDefinition(name: string, entry: unknown, fromModule: boolean): AgentDefinition {
  if (!isRecord(entry)) throw new InvalidAgentError(name, "(agent)", "must be an object");
  if (!fromModule) {
    const unknown = Object.keys(entry).find((key) => !FILE_FIELDS.has(key));
    if (unknown)
      throw new InvalidAgentError(
        name,
        unknown,
        `unknown field (known: ${[...FILE_FIELDS].join(", ")})`,
      );
  }
  return defineAgent({ ...(entry as unknown as AgentDefinition), name });
}

/** The definitions in `contents`: `{ agents: { <name>: {...} } }`, or (modules) `{ agents: [defineAgent(...)] }`. */
function readDefinitions(contents: unknown, fromModule: boolean): AgentDefinition[] {
  if (!isRecord(contents) || contents.agents === undefined)
    throw new Error('must hold { "agents": { "<name>": { "instructions": …, "model": … } } }');
  const { agents } = contents;
  const entries: [string, unknown][] = Array.isArray(agents)
    ? agents.map((a) => [String(isRecord(a) ? a.name : a), a])
    : isRecord(agents)
      ? Object.entries(agents)
      : [];
  if (entries.length === 0) throw new Error("agents: must name at least one agent");
  const definitions = entries.map(([name, entry]) => toDefinition(name, entry, fromModule));
  const seen = new Set<string>();
  for (const { name } of definitions) {
    if (seen.has(name)) throw new InvalidAgentError(name, "name", "defined twice");
    seen.add(name);
  }
  return definitions;
}

/**
 * Loads the agent definitions of a `YIEM_AGENTS` file: `.json` or `.yaml` holding
 * `{ agents: { <name>: { instructions, model, modelSettings?, baseURL?, apiKeyEnv?, tools?,
 * maxTurns?, outputSchema?, outputRetries?, budget?, description?, handoffs?, inputSchema?,
 * agents? } } }`, or a module (`.ts`, `.mjs`, …)
 * exporting `agents` (that map, or a list of `defineAgent(...)`). Throws `AgentsFileError`
 * naming the file, the agent and the field.
 *
 * @example await loadAgentsFile("agents.yaml") // [{ name: "support", instructions: "…", model: "gpt-4o-mini" }]
 */
export async function loadAgentsFile(path: string): Promise<AgentDefinition[]> {
  const fromModule = MODULE_EXTENSIONS.has(extname(path).toLowerCase());
  let contents: unknown;
  try {
    contents = await readContents(path);
  } catch (err) {
    throw new AgentsFileError(path, (err as Error).message);
  }
  try {
    return readDefinitions(contents, fromModule);
  } catch (err) {
    throw new AgentsFileError(path, (err as Error).message);
  }
}
