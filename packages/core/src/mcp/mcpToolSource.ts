import { type Logger, silentLogger } from "../ops/logger.js";
import { describeBadToolNaming } from "../tools/toolNames.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import type { AgentTool } from "../types/tools.js";
import { isMcpToolAllowed, toMcpAgentTool } from "./mcpAgentTool.js";
import type { McpConfig } from "./mcpConfig.js";
import type { McpServerConnection, McpServerState, McpTool } from "./mcpServerConnection.js";

/** Options of `startMcpToolSource`. */
export interface McpToolSourceOptions {
  /** The servers (`readMcpConfig`). */
  config: McpConfig;
  /** Where their tools go (a worker's store). */
  toolStore: ToolStore;
  logger?: Logger;
}

/** One server as the source sees it. */
export interface McpServerStatus {
  name: string;
  state: McpServerState;
  /** The Yiem names of its tools in the store now. */
  tools: string[];
}

/** The running MCP tool source of a process. */
export interface McpToolSource {
  /** Each server's state and tools. */
  servers(): McpServerStatus[];
  /** Closes every client (and the processes of stdio servers) and removes their tools. */
  close(): Promise<void>;
}

/** The tools one server has in the store, kept in line with what it offers. */
class ServerTools {
  readonly names = new Set<string>();
  /** The skips already warned about (tool and reason): a listing again warns only of new ones. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly connection: McpServerConnection,
    private readonly store: ToolStore,
    private readonly log: Logger,
  ) {}

  /**
   * Registers the server's allowed tools (replacing), removes those it no longer offers. Two
   * MCP tools whose Yiem names are the same (names that differ only in characters `mcpToolName`
   * replaces) keep the first, with a warning naming both. Logs the tools at info level when
   * they changed, at debug level when a listing found the same ones.
   */
  sync(offered: McpTool[]): void {
    const next = new Map<string, { agentTool: AgentTool; mcpName: string }>();
    for (const tool of offered) {
      const agentTool = this.convert(tool);
      if (!agentTool) continue;
      const first = next.get(agentTool.name);
      if (first) {
        this.skip(tool, `its Yiem name ${agentTool.name} is that of MCP tool "${first.mcpName}"`);
        continue;
      }
      next.set(agentTool.name, { agentTool, mcpName: tool.name });
    }
    const previous = new Set(this.names);
    for (const name of previous) {
      if (!next.has(name)) this.store.tools.delete(name);
    }
    this.names.clear();
    for (const { agentTool: tool } of next.values()) {
      if (this.store.tools.has(tool.name) && !previous.has(tool.name)) {
        this.skip(tool, "another tool of this worker has that name");
        continue;
      }
      registerTool(this.store, tool);
      this.names.add(tool.name);
    }
    const server = this.connection.config.name;
    const changed =
      previous.size !== this.names.size || [...previous].some((n) => !this.names.has(n));
    this.log[changed ? "info" : "debug"](
      { mcpServer: server, tools: [...this.names] },
      "mcp tools registered",
    );
  }

  /** Removes every tool of the server (it is down). */
  removeAll(): void {
    for (const name of this.names) this.store.tools.delete(name);
    this.names.clear();
  }

  private convert(tool: McpTool): AgentTool | undefined {
    const { config } = this.connection;
    if (!isMcpToolAllowed(config, tool.name)) return undefined;
    if (tool.execution?.taskSupport === "required") {
      return this.skip(tool, "it runs only as an MCP task, which Yiem does not support");
    }
    const agentTool = toMcpAgentTool(this.connection, tool, this.log);
    const badName = describeBadToolNaming(agentTool);
    if (badName) return this.skip(tool, `its Yiem name ${agentTool.name} is refused: ${badName}`);
    return agentTool;
  }

  private skip(tool: Pick<McpTool, "name">, reason: string): undefined {
    const key = `${tool.name}\n${reason}`;
    if (this.warned.has(key)) return undefined;
    if (this.warned.size >= 10_000) this.warned.clear(); // a server renaming its tools forever
    this.warned.add(key);
    const server = this.connection.config.name;
    this.log.warn({ mcpServer: server, tool: tool.name, reason }, "mcp tool skipped");
    return undefined;
  }
}

/**
 * Connects to every server of `config` and keeps their tools in `toolStore` (see
 * `toMcpAgentTool` for names and calls): registered once a server is up, replaced, added and
 * removed on `notifications/tools/list_changed`, all removed while it is down (it is
 * restarted with a backoff) and back when it is up. Resolves once every server made its first
 * attempt, connected or not; one that did not keeps being tried. A tool whose name another
 * tool of the store already has is skipped with a warning.
 *
 * @example
 * const mcp = await startMcpToolSource({ config: readMcpConfig(file), toolStore, logger });
 * // … startToolWorker({ toolStore, … }); on shutdown: await worker.close(); await mcp.close();
 */
export async function startMcpToolSource(options: McpToolSourceOptions): Promise<McpToolSource> {
  const log = options.logger ?? silentLogger;
  // Loaded here, not at import: a process without MCP servers never loads the SDK (~250 ms).
  const { McpServerConnection } = await import("./mcpServerConnection.js");
  const entries = options.config.servers.map((config) => {
    let tools: ServerTools | undefined;
    const connection = new McpServerConnection(config, log, {
      onTools: (offered) => tools?.sync(offered),
      onDown: () => tools?.removeAll(),
    });
    tools = new ServerTools(connection, options.toolStore, log);
    return { connection, tools };
  });
  await Promise.all(entries.map((entry) => entry.connection.start()));
  return {
    servers: () =>
      entries.map(({ connection, tools }) => ({
        name: connection.config.name,
        state: connection.state(),
        tools: [...tools.names],
      })),
    async close() {
      await Promise.all(entries.map((entry) => entry.connection.close()));
      for (const entry of entries) entry.tools.removeAll();
    },
  };
}
