import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { YiemError } from "../errors/yiemError.js";
import { processEnv } from "../settings/readSettings.js";
import { AGENT_TOOL_PREFIX, TOOL_QUEUE_PATTERN } from "../tools/toolNames.js";

/**
 * How a tool of an MCP server runs in Yiem: the `AgentTool` fields a config may set, per
 * server or per tool (a tool's own entry wins, field by field).
 */
export interface McpToolOptions {
  timeoutMs?: number;
  retries?: number;
  queue?: string;
  concurrency?: number;
  rateLimit?: { max: number; durationMs: number };
  approval?: "always";
  approvalTimeoutMs?: number;
  idempotent?: boolean;
}

/** What every server entry may carry besides how to reach it. */
export interface McpServerCommon extends McpToolOptions {
  /** The server's name, the key of its entry. */
  name: string;
  /** Put before each tool's name with `__` between: default the server's name; `""` keeps bare names. */
  toolPrefix: string;
  /** Only these tools (MCP names); all when unset. */
  allowTools?: string[];
  /** Never these tools (MCP names). */
  denyTools: string[];
  /** Per-tool options, by MCP tool name. */
  tools: Record<string, McpToolOptions>;
  /** A ping this often tells a server that stopped answering (0: never). */
  pingIntervalMs: number;
  /** How long a ping may take before the server counts as not answering. */
  pingTimeoutMs: number;
  /** The bounds of one listing of the server's tools (`tools/list`, page after page). */
  list: McpListBounds;
}

/**
 * The bounds of one listing of a server's tools: past any of them the listing fails with an
 * error naming the bound (the server's tools are then those of its last good listing, or none
 * on a first connection, which is tried again with the backoff), never a worker that grows
 * without end or never gets ready. Config fields `listMaxPages`, `listMaxTools`,
 * `listMaxBytes`, `listTimeoutMs`, `listIntervalMs`; defaults in `MCP_LIST_DEFAULTS`.
 */
export interface McpListBounds {
  /** The most pages (`nextCursor` followed) one listing reads. */
  maxPages: number;
  /** The most tools one listing may return, all pages together. */
  maxTools: number;
  /** The most bytes (of the tools' JSON) one listing may return, all pages together. */
  maxBytes: number;
  /** The most time one listing may take, all pages together. */
  timeoutMs: number;
  /**
   * The least time between two listings: `notifications/tools/list_changed` arriving faster
   * are coalesced into one listing when the interval is over.
   */
  intervalMs: number;
}

/** A server the worker spawns and talks to over stdin/stdout. */
export interface McpStdioServerConfig extends McpServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  /** Added to a minimal environment (PATH, HOME, …): the worker's own variables are not passed. */
  env: Record<string, string>;
  /** Resolved against the config file's folder. */
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommon {
  transport: "http";
  url: string;
  headers: Record<string, string>;
}

/** One server entry of `mcpServers`, validated. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A validated `YIEM_MCP_CONFIG` file. */
export interface McpConfig {
  /** The file it was read from. */
  file: string;
  /** The servers to connect to, in file order (entries with `"disabled": true` left out). */
  servers: McpServerConfig[];
}

/**
 * A config file that cannot be used; the message names the file, the server and the field.
 * Terminal.
 *
 * @example `YIEM_MCP_CONFIG /etc/yiem/mcp.json: server "git": tools.log.timeoutMs: must be a whole number above 0`
 */
export class McpConfigError extends YiemError {
  override name = "McpConfigError";
  constructor(
    readonly file: string,
    readonly server: string | undefined,
    readonly field: string | undefined,
    problem: string,
  ) {
    const where = [server === undefined ? "" : `server "${server}"`, field ?? ""].filter(Boolean);
    super(`YIEM_MCP_CONFIG ${file}: ${[...where, problem].join(": ")}`);
  }
}

const positiveInt = z.number().int().positive();
const toolOptionsShape = {
  timeoutMs: positiveInt.optional(),
  retries: z.number().int().nonnegative().optional(),
  queue: z.string().regex(TOOL_QUEUE_PATTERN, `must match ${TOOL_QUEUE_PATTERN.source}`).optional(),
  concurrency: positiveInt.optional(),
  rateLimit: z.strictObject({ max: positiveInt, durationMs: positiveInt }).optional(),
  approval: z.literal("always").optional(),
  approvalTimeoutMs: positiveInt.optional(),
  idempotent: z.boolean().optional(),
};
const toolOptionsSchema = z.strictObject(toolOptionsShape);
const nameList = z.array(z.string().min(1));
const serverSchema = z
  .strictObject({
    ...toolOptionsShape,
    type: z.enum(["stdio", "http", "streamable-http", "streamableHttp"]).optional(),
    disabled: z.boolean().optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    toolPrefix: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{0,32}$/, "must match ^[a-zA-Z0-9_-]{0,32}$")
      .optional(),
    allowTools: nameList.optional(),
    denyTools: nameList.optional(),
    tools: z.record(z.string(), toolOptionsSchema).optional(),
    pingIntervalMs: z.number().int().nonnegative().optional(),
    pingTimeoutMs: positiveInt.optional(),
    listMaxPages: positiveInt.optional(),
    listMaxTools: positiveInt.optional(),
    listMaxBytes: positiveInt.optional(),
    listTimeoutMs: positiveInt.optional(),
    listIntervalMs: z.number().int().nonnegative().optional(),
  })
  .check((ctx) => {
    const { command, url } = ctx.value;
    if ((command === undefined) === (url === undefined)) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: 'needs exactly one of "command" (stdio) or "url" (Streamable HTTP)',
      });
    }
  });
const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;
type RawServer = z.infer<typeof serverSchema>;

/** Defaults of the health check: a ping every 10 s, answered within 5 s. */
export const MCP_PING_DEFAULTS = { intervalMs: 10_000, timeoutMs: 5_000 } as const;

/**
 * Defaults of `McpListBounds`: 100 pages, 1,000 tools, 4 MiB of tool definitions and 30 s per
 * listing, and at most one listing a second however fast `list_changed` notifications come.
 */
export const MCP_LIST_DEFAULTS: McpListBounds = {
  maxPages: 100,
  maxTools: 1000,
  maxBytes: 4 * 1024 * 1024,
  timeoutMs: 30_000,
  intervalMs: 1000,
};

function parseJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new McpConfigError(file, undefined, undefined, `cannot read: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new McpConfigError(file, undefined, undefined, `not JSON: ${(err as Error).message}`);
  }
}

function readServersObject(file: string, json: unknown): Record<string, unknown> {
  const servers = (json as { mcpServers?: unknown } | null)?.mcpServers;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new McpConfigError(file, undefined, "mcpServers", "must be an object of servers by name");
  }
  return servers as Record<string, unknown>;
}

function parseServer(file: string, name: string, raw: unknown): RawServer {
  if (!SERVER_NAME.test(name)) {
    throw new McpConfigError(file, name, undefined, `the name must match ${SERVER_NAME.source}`);
  }
  const parsed = serverSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : undefined;
  throw new McpConfigError(file, name, field, issue?.message ?? "invalid");
}

/** `${NAME}` and `${NAME:-default}` from the environment, as other MCP hosts expand them. */
function expandVariables(
  value: string,
  env: NodeJS.ProcessEnv,
  fail: (name: string) => never,
): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name, fallback) => {
    const found = env[name as string];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback as string;
    return fail(name as string);
  });
}

function expandRecord(
  record: Record<string, string> | undefined,
  expand: (value: string, field: string) => string,
  field: string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record ?? {}).map(([key, value]) => [key, expand(value, `${field}.${key}`)]),
  );
}

function pickToolOptions(raw: McpToolOptions): McpToolOptions {
  const options: McpToolOptions = {};
  for (const key of Object.keys(toolOptionsShape) as (keyof McpToolOptions)[]) {
    if (raw[key] !== undefined) Object.assign(options, { [key]: raw[key] });
  }
  return options;
}

function toServerConfig(
  file: string,
  name: string,
  raw: RawServer,
  env: NodeJS.ProcessEnv,
): McpServerConfig {
  const expand = (value: string, field: string) =>
    expandVariables(value, env, (variable) => {
      throw new McpConfigError(file, name, field, `\${${variable}} is not set`);
    });
  const common = {
    ...pickToolOptions(raw),
    name,
    toolPrefix: raw.toolPrefix ?? name,
    ...(raw.allowTools ? { allowTools: raw.allowTools } : {}),
    denyTools: raw.denyTools ?? [],
    tools: raw.tools ?? {},
    pingIntervalMs: raw.pingIntervalMs ?? MCP_PING_DEFAULTS.intervalMs,
    pingTimeoutMs: raw.pingTimeoutMs ?? MCP_PING_DEFAULTS.timeoutMs,
    list: {
      maxPages: raw.listMaxPages ?? MCP_LIST_DEFAULTS.maxPages,
      maxTools: raw.listMaxTools ?? MCP_LIST_DEFAULTS.maxTools,
      maxBytes: raw.listMaxBytes ?? MCP_LIST_DEFAULTS.maxBytes,
      timeoutMs: raw.listTimeoutMs ?? MCP_LIST_DEFAULTS.timeoutMs,
      intervalMs: raw.listIntervalMs ?? MCP_LIST_DEFAULTS.intervalMs,
    },
  };
  if (raw.url !== undefined) {
    if (raw.type === "stdio")
      throw new McpConfigError(file, name, "type", '"stdio" needs "command"');
    const headers = expandRecord(raw.headers, expand, "headers");
    return { ...common, transport: "http", url: expand(raw.url, "url"), headers };
  }
  if (raw.type !== undefined && raw.type !== "stdio") {
    throw new McpConfigError(file, name, "type", `"${raw.type}" needs "url"`);
  }
  return {
    ...common,
    transport: "stdio",
    command: expand(raw.command ?? "", "command"),
    args: (raw.args ?? []).map((arg, i) => expand(arg, `args.${i}`)),
    env: expandRecord(raw.env, expand, "env"),
    ...(raw.cwd ? { cwd: resolve(dirname(file), expand(raw.cwd, "cwd")) } : {}),
  };
}

/**
 * Reads and validates an MCP config file (`YIEM_MCP_CONFIG`), in the format other MCP hosts
 * use: `{ "mcpServers": { "<name>": { "command", "args", "env", "cwd" } | { "url", "headers" } } }`,
 * plus Yiem's fields per server (`toolPrefix`, `allowTools`, `denyTools`, `tools`, the
 * `AgentTool` options). `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `cwd`,
 * `url` and `headers` are read from `env`. Throws `McpConfigError` naming the file, the server
 * and the field of the first problem, among them a tool prefix that would make agent-call
 * names (`agent__<tool>`: a server named `agent` without another `toolPrefix`) or that two
 * servers share.
 *
 * @example const config = readMcpConfig("mcp.json"); // a worker: readSettings("worker").mcpConfig
 */
export function readMcpConfig(file: string, env: NodeJS.ProcessEnv = processEnv()): McpConfig {
  const path = resolve(file);
  const entries = Object.entries(readServersObject(path, parseJsonFile(path)));
  const servers: McpServerConfig[] = [];
  for (const [name, raw] of entries) {
    const parsed = parseServer(path, name, raw);
    if (parsed.disabled) continue;
    servers.push(toServerConfig(path, name, parsed, env));
  }
  checkToolPrefixes(path, servers);
  return { file: path, servers };
}

/**
 * Refuses prefixes whose tool names would collide: one that makes `agent__<tool>` (the names
 * of agent calls: a server named `agent` needs another `toolPrefix`), and one prefix shared by
 * two servers (their tools would shadow each other's). `""` (bare names) may be shared: a
 * collision there is a tool skipped with a warning naming it.
 */
function checkToolPrefixes(file: string, servers: McpServerConfig[]): void {
  const byPrefix = new Map<string, string>();
  for (const server of servers) {
    const prefix = server.toolPrefix;
    if (`${prefix}__`.startsWith(AGENT_TOOL_PREFIX)) {
      const field = prefix === server.name ? undefined : "toolPrefix";
      throw new McpConfigError(
        file,
        server.name,
        field,
        `the tool prefix "${prefix}" would name its tools ${prefix}__<tool>, which names agent calls (agents calling agents); set another "toolPrefix"`,
      );
    }
    const other = byPrefix.get(prefix);
    if (prefix !== "" && other !== undefined) {
      throw new McpConfigError(
        file,
        server.name,
        "toolPrefix",
        `the tool prefix "${prefix}" is also that of server "${other}": their tools would have the same names; give one another "toolPrefix"`,
      );
    }
    byPrefix.set(prefix, server.name);
  }
}
