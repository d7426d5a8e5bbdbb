import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../ops/logger.js";
import { loadMcpClientSdk, type McpClientSdk } from "./mcpClientSdk.js";
import type { McpServerConfig } from "./mcpConfig.js";
import { McpServerDownError, McpServerLostError, McpToolListError } from "./mcpErrors.js";
import { nextRestartDelayMs, RESTART_BACKOFF } from "./restartBackoff.js";

/** What a connection tells its owner. */
export interface McpServerListener {
  /** The server is up with these tools (on every connect and every `list_changed`). */
  onTools(tools: Tool[]): void;
  /** The server went down; a restart is scheduled. */
  onDown(reason: string): void;
}

/** The state of one server: `up` with a live session, `down` between sessions, `closed` for good. */
export type McpServerState = "up" | "down" | "closed";

interface Session {
  /** The SDK the session was made with (loaded on the first connect). */
  sdk: McpClientSdk;
  client: Client;
  transport: Transport;
  /** Rejects with `McpServerLostError` once the session is lost; calls race it. */
  lost: Promise<never>;
  lose: (reason: string) => void;
  upSince: number;
  pingTimer?: NodeJS.Timeout;
  /** `list_changed` notifications coalesced into one listing at a time, at most one per `list.intervalMs`. */
  refresh: RefreshState;
}

/** Where the session's re-listing stands. */
interface RefreshState {
  running: boolean;
  /** A notification came since the running (or last) listing started. */
  wanted: boolean;
  timer?: NodeJS.Timeout;
  /** When the last listing ended (or the session listed its tools on connecting). */
  lastAt: number;
}

/** The most a request may wait in the SDK: calls are bounded by their signal and the health check instead. */
const NO_REQUEST_TIMEOUT_MS = 2_147_483_647;
const CONNECT_TIMEOUT_MS = 15_000;
const MAX_STDERR_LINE = 2000;

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One MCP server, kept connected: connects (spawning a stdio server's process), lists its
 * tools within the bounds of `config.list` (pages, tools, bytes, time), follows
 * `notifications/tools/list_changed` (coalesced: one listing at a time, at most one per
 * `list.intervalMs`), pings it, and when it exits, closes or
 * stops answering, fails the calls in flight with `McpServerLostError` and connects again
 * after a backoff (`restartBackoff.ts`). A stdio server's stderr goes to the log, a line each.
 */
export class McpServerConnection {
  private session: Session | undefined;
  private failures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly upWaiters = new Set<() => void>();

  constructor(
    readonly config: McpServerConfig,
    private readonly log: Logger,
    private readonly listener: McpServerListener,
  ) {}

  /** Where the server stands. */
  state(): McpServerState {
    if (this.closed) return "closed";
    return this.session ? "up" : "down";
  }

  /** Makes the first connection attempt; resolves once it succeeded or failed (a restart is then scheduled). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Calls tool `name` on the live session; throws `McpServerDownError` or `McpServerLostError` when there is none or it is lost meanwhile. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; onProgress?: (progress: unknown) => void },
  ): Promise<CallToolResult> {
    const session = this.session;
    if (!session) throw new McpServerDownError(`MCP server "${this.config.name}" is down`);
    const call = session.client.callTool({ name, arguments: args }, undefined, {
      signal: options.signal,
      timeout: NO_REQUEST_TIMEOUT_MS,
      ...(options.onProgress ? { onprogress: options.onProgress } : {}),
    });
    try {
      return (await Promise.race([call, session.lost])) as CallToolResult;
    } catch (err) {
      // A transport failure (an HTTP server gone) is a reason to check on the server now.
      if (!(err instanceof session.sdk.McpError) && !options.signal?.aborted)
        void this.checkHealth(session);
      throw err;
    }
  }

  /** Resolves once the server is up; rejects on `signal` or after `maxMs`. */
  waitUntilUp(signal: AbortSignal | undefined, maxMs: number): Promise<void> {
    if (this.session) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.upWaiters.delete(onUp);
        if (err) reject(err);
        else resolve();
      };
      const onUp = () => done();
      const onAbort = () => done(new Error("aborted"));
      const timer = setTimeout(
        () =>
          done(
            new McpServerDownError(
              `MCP server "${this.config.name}" is still down after ${maxMs} ms`,
            ),
          ),
        maxMs,
      );
      this.upWaiters.add(onUp);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Closes the session (a stdio server's process with it) and stops restarting. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    clearInterval(session.pingTimer);
    clearTimeout(session.refresh.timer);
    session.lose(`MCP server "${this.config.name}" was closed (the worker is stopping)`);
    if (session.transport instanceof session.sdk.StreamableHTTPClientTransport) {
      // Ends the server's session too, so it does not wait for a client that is gone.
      await session.transport.terminateSession().catch(() => undefined);
    }
    await session.client.close().catch(() => undefined);
  }

  private createTransport(sdk: McpClientSdk): Transport {
    const { config } = this;
    if (config.transport === "http") {
      return new sdk.StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      });
    }
    const transport = new sdk.StdioClientTransport({
      command: config.command,
      args: config.args,
      env: config.env,
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: "pipe",
    });
    this.logStderr(transport.stderr as Readable | null);
    return transport;
  }

  private logStderr(stderr: Readable | null): void {
    if (!stderr) return;
    const lines = createInterface({ input: stderr });
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      this.log.info(
        { mcpServer: this.config.name, stderr: line.slice(0, MAX_STDERR_LINE) },
        "mcp server stderr",
      );
    });
  }

  private newSession(sdk: McpClientSdk, client: Client, transport: Transport): Session {
    let lose: (reason: string) => void = () => undefined;
    const lost = new Promise<never>((_resolve, reject) => {
      lose = (reason) => reject(new McpServerLostError(reason));
    });
    lost.catch(() => undefined); // only calls in flight care
    const refresh: RefreshState = { running: false, wanted: false, lastAt: Date.now() };
    return { sdk, client, transport, lost, lose, upSince: Date.now(), refresh };
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { name } = this.config;
    const sdk = await loadMcpClientSdk();
    if (this.closed) return;
    const transport = this.createTransport(sdk);
    const client = new sdk.Client(
      { name: "yiem-tool-worker", version: "0.1.0" },
      { capabilities: {} },
    );
    const session = this.newSession(sdk, client, transport);
    client.onerror = (err) =>
      this.log.debug({ mcpServer: name, err: err.message }, "mcp transport error");
    client.onclose = () => this.lose(session, this.closeReason());
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () =>
        this.requestRefresh(session),
      );
      const tools = await this.listAllTools(client);
      session.refresh.lastAt = Date.now();
      if (this.closed) throw new Error("closed while connecting");
      this.session = session;
      session.upSince = Date.now();
      this.startPing(session);
      this.log.info({ mcpServer: name, transport: this.config.transport }, "mcp server connected");
      this.listener.onTools(tools);
      for (const waiter of [...this.upWaiters]) waiter();
    } catch (err) {
      client.onclose = undefined;
      clearTimeout(session.refresh.timer);
      await client.close().catch(() => undefined);
      if (this.closed) return;
      if (err instanceof McpToolListError) {
        this.log.error(
          { mcpServer: name, err: err.message },
          "mcp tool listing over its bounds; none of the server's tools are served",
        );
      } else {
        this.log.warn({ mcpServer: name, err: describeError(err) }, "mcp server did not connect");
      }
      this.scheduleRestart();
    }
  }

  private closeReason(): string {
    return this.config.transport === "stdio"
      ? `MCP server "${this.config.name}" exited`
      : `the connection to MCP server "${this.config.name}" closed`;
  }

  /**
   * Every tool of the server, page after page, within `config.list`: past its pages, tools,
   * bytes or time this throws `McpToolListError` naming the bound and its config field.
   */
  private async listAllTools(client: Client): Promise<Tool[]> {
    const { name, list } = this.config;
    const over = (what: string) =>
      new McpToolListError(`MCP server "${name}": its tools/list went past ${what}`);
    const signal = AbortSignal.timeout(list.timeoutMs);
    const tools: Tool[] = [];
    let bytes = 0;
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = await client
        .listTools(cursor ? { cursor } : {}, { timeout: CONNECT_TIMEOUT_MS, signal })
        .catch((err: unknown) => {
          throw signal.aborted ? over(`${list.timeoutMs} ms (listTimeoutMs)`) : err;
        });
      tools.push(...page.tools);
      bytes += Buffer.byteLength(JSON.stringify(page.tools), "utf8");
      if (tools.length > list.maxTools) throw over(`${list.maxTools} tools (listMaxTools)`);
      if (bytes > list.maxBytes) throw over(`${list.maxBytes} bytes (listMaxBytes)`);
      cursor = page.nextCursor;
      if (!cursor) return tools;
      if (pages >= list.maxPages) throw over(`${list.maxPages} pages (listMaxPages)`);
    }
  }

  /**
   * Answers a `list_changed` notification: one listing at a time, at most one per
   * `list.intervalMs`; notifications meanwhile make one more listing after it, never one each.
   */
  private requestRefresh(session: Session): void {
    const { refresh } = session;
    refresh.wanted = true;
    if (refresh.running || refresh.timer || this.session !== session) return;
    const waitMs = Math.max(0, refresh.lastAt + this.config.list.intervalMs - Date.now());
    refresh.timer = setTimeout(() => {
      refresh.timer = undefined;
      void this.refreshTools(session);
    }, waitMs);
    refresh.timer.unref();
  }

  private async refreshTools(session: Session): Promise<void> {
    const { refresh } = session;
    refresh.wanted = false;
    refresh.running = true;
    try {
      const tools = await this.listAllTools(session.client);
      if (this.session === session) this.listener.onTools(tools);
    } catch (err) {
      const over = err instanceof McpToolListError;
      this.log[over ? "error" : "warn"](
        { mcpServer: this.config.name, err: describeError(err) },
        over
          ? "mcp tool listing over its bounds; the server keeps the tools of its last listing"
          : "mcp tool list refresh failed",
      );
    } finally {
      refresh.running = false;
      refresh.lastAt = Date.now();
      if (refresh.wanted) this.requestRefresh(session);
    }
  }

  private startPing(session: Session): void {
    const { pingIntervalMs } = this.config;
    if (pingIntervalMs <= 0) return;
    session.pingTimer = setInterval(() => void this.checkHealth(session), pingIntervalMs);
    session.pingTimer.unref();
  }

  private async checkHealth(session: Session): Promise<void> {
    const { name, pingTimeoutMs } = this.config;
    try {
      await session.client.ping({ timeout: pingTimeoutMs });
    } catch (err) {
      if (this.session !== session) return;
      this.log.warn(
        { mcpServer: name, err: describeError(err) },
        "mcp server not answering; restarting it",
      );
      this.lose(session, `MCP server "${name}" stopped answering (${describeError(err)})`);
    }
  }

  /** Ends a session that was lost: its calls fail, its tools go, a restart is scheduled. */
  private lose(session: Session, reason: string): void {
    if (this.session !== session) return;
    this.session = undefined;
    clearInterval(session.pingTimer);
    clearTimeout(session.refresh.timer);
    session.lose(reason);
    if (Date.now() - session.upSince >= RESTART_BACKOFF.stableMs) this.failures = 0;
    this.log.warn({ mcpServer: this.config.name, reason }, "mcp server down");
    this.listener.onDown(reason);
    session.client.onclose = undefined;
    void session.client.close().catch(() => undefined);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed) return;
    const delayMs = nextRestartDelayMs(this.failures);
    this.failures += 1;
    this.log.info(
      { mcpServer: this.config.name, delayMs, attempt: this.failures },
      "mcp server restart scheduled",
    );
    this.restartTimer = setTimeout(() => void this.connect(), delayMs);
  }
}

export type { Tool as McpTool };
