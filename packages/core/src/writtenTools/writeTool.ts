import { checkSandboxCode } from "../sandbox/runInSandbox.js";
import type { SandboxLimits } from "../sandbox/sandboxLimits.js";
import { readSetting, type SettingsSource } from "../settings/readSettings.js";
import { LIST_TOOLS_NAME } from "../tools/listTool.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import type { AgentTool, AgentToolResult, ToolArgs } from "../types/index.js";
import { toAgentTool, writtenToolOf } from "./toAgentTool.js";
import { describeInvalidSpec, WRITTEN_TOOL_LIMITS } from "./writtenToolSpec.js";
import { saveWrittenTool } from "./writtenToolStore.js";
import type { WrittenToolSpec, WrittenToolsRedis } from "./writtenToolTypes.js";

/** The name under which `createWriteTool` registers. */
export const WRITE_TOOL_NAME = "writeTool";

/** The environment variable that enables `writeTool` (it must be exactly `1`). */
export const ALLOW_WRITE_TOOL_ENV = "YIEM_ALLOW_WRITE_TOOL";

/** The error text of a disabled `writeTool`. */
export const WRITE_TOOL_DISABLED = `writeTool is disabled: set ${ALLOW_WRITE_TOOL_ENV}=1`;

/**
 * Whether `env` (this process's environment unless given) enables `writeTool`
 * (`YIEM_ALLOW_WRITE_TOOL=1`, read through the settings catalogue). Off by default.
 */
export function isWriteToolAllowed(env?: SettingsSource): boolean {
  return readSetting("allowWriteTool", env);
}

/** Options of `createWriteTool`. */
export interface WriteToolOptions {
  redis: WrittenToolsRedis;
  prefix: string;
  /** The store the new tools are registered in (the coordinator's). */
  store: ToolStore;
  /** False: every call is refused. Pass `isWriteToolAllowed()`. */
  allowed: boolean;
  /** Sandbox limits of the dry compile and of the tools it registers. */
  limits?: SandboxLimits;
}

const WRITE_TOOL_SCHEMA = {
  type: "object",
  properties: {
    name: {
      type: "string",
      pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
      description:
        "Identifier of the new tool (letters, digits, _). Existing tools that were not written with writeTool cannot be replaced.",
    },
    label: { type: "string", minLength: 1, maxLength: WRITTEN_TOOL_LIMITS.label },
    description: { type: "string", minLength: 1, maxLength: WRITTEN_TOOL_LIMITS.description },
    inputSchema: {
      type: "object",
      description: 'JSON Schema of the new tool\'s arguments, with type "object".',
    },
    executeCode: {
      type: "string",
      minLength: 1,
      maxLength: WRITTEN_TOOL_LIMITS.code,
      description:
        'JavaScript: the BODY of function (args) { ... } (not wrapped in a function). Return a string, or {content: [{type: "text", text}], details: {}}. console.log output is kept in details.logs.',
    },
    parallel: {
      type: "boolean",
      description: "May run in parallel with other calls (default false).",
    },
  },
  required: ["name", "label", "description", "inputSchema", "executeCode"],
  additionalProperties: false,
};

const DESCRIPTION =
  "Create or update a tool you can call afterwards. Its code is the body of a JavaScript function receiving `args`, run in an isolated sandbox with no network, no files, no environment and short time and memory limits: it can only compute from its arguments. Use listTools first to avoid name collisions. Saving identical content changes nothing; changed content becomes a new version.";

function specFromArgs(args: ToolArgs): WrittenToolSpec {
  return {
    name: args.name as string,
    label: args.label as string,
    description: args.description as string,
    inputSchema: args.inputSchema as WrittenToolSpec["inputSchema"],
    code: args.executeCode as string,
    parallel: args.parallel === true,
  };
}

/** Why `spec` may not be written into `store`, or `undefined`. Never throws. */
async function refusal(
  spec: WrittenToolSpec,
  options: WriteToolOptions,
): Promise<string | undefined> {
  const invalid = describeInvalidSpec(spec);
  if (invalid) return invalid.replace(/^code /, "executeCode ");
  const existing = options.store.tools.get(spec.name);
  const reserved = spec.name === WRITE_TOOL_NAME || spec.name === LIST_TOOLS_NAME;
  if (reserved || (existing && !writtenToolOf(existing))) {
    return `"${spec.name}" is a built-in tool and cannot be replaced; choose another name`;
  }
  const problem = await checkSandboxCode(spec.code, options.limits);
  return problem ? `executeCode does not compile: ${problem}` : undefined;
}

async function writeOne(
  spec: WrittenToolSpec,
  options: WriteToolOptions,
): Promise<AgentToolResult> {
  const problem = await refusal(spec, options);
  if (problem) throw new Error(`writeTool refused "${spec.name}": ${problem}`);
  const { definition, changed } = await saveWrittenTool(options.redis, options.prefix, spec);
  registerTool(options.store, toAgentTool(definition, options.limits));
  const where = `version ${definition.version} (hash ${definition.hash.slice(0, 8)}…)`;
  const text = changed
    ? `Tool "${definition.name}" saved as ${where}`
    : `Tool "${definition.name}" unchanged: ${where} already has this content`;
  return {
    content: [{ type: "text", text }],
    details: { name: definition.name, version: definition.version, hash: definition.hash, changed },
    addedToolNames: [definition.name],
  };
}

/**
 * The `writeTool` tool (lifecycle §15, in JavaScript): checks the definition (identifier name,
 * texts, an input schema the repo's validator compiles, a body that compiles in the sandbox),
 * refuses names of tools that are not written tools (built-ins are never replaced), saves it in
 * Redis (`saveWrittenTool`: content-hashed, versioned), registers it in `store` and answers
 * with `addedToolNames: [name]`. Refuses everything when `allowed` is false. Runs in sequential
 * batches. A refusal or failure is thrown, so the pipeline turns it into an error result.
 *
 * @example
 * registerTool(store, createWriteTool({ redis, prefix: "yiem", store, allowed: isWriteToolAllowed() }));
 */
export function createWriteTool(options: WriteToolOptions): AgentTool {
  return {
    name: WRITE_TOOL_NAME,
    label: "Write Tool",
    description: DESCRIPTION,
    inputSchema: WRITE_TOOL_SCHEMA,
    parallelToolExecute: false,
    idempotent: true,
    execute: (_toolCallId, args) => {
      if (!options.allowed) throw new Error(WRITE_TOOL_DISABLED);
      return writeOne(specFromArgs(args), options);
    },
  };
}
