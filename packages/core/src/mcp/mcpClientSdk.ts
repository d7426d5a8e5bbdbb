/**
 * The MCP SDK's client side, loaded on first use: its client, transports and schemas took
 * about 130 ms of every process's start (coordinator and gateway included) though only a
 * tool worker with MCP servers uses them.
 */
export interface McpClientSdk {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  StdioClientTransport: typeof import("@modelcontextprotocol/sdk/client/stdio.js").StdioClientTransport;
  StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
  McpError: typeof import("@modelcontextprotocol/sdk/types.js").McpError;
  ToolListChangedNotificationSchema: typeof import("@modelcontextprotocol/sdk/types.js").ToolListChangedNotificationSchema;
}

let loading: Promise<McpClientSdk> | undefined;

/**
 * Loads the MCP SDK's client side once (later calls share the first load). Rejects only when
 * the SDK cannot be loaded (it is a dependency of this package).
 */
export function loadMcpClientSdk(): Promise<McpClientSdk> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, stdio, http, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  }));
  return loading;
}
