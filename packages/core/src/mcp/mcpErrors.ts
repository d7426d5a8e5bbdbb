import { YiemError } from "../errors/yiemError.js";

/*
 * The errors of MCP tool calls, apart from the connection (`mcpServerConnection.ts`) so that
 * what tells them apart does not load the MCP SDK.
 */

/**
 * A call's MCP server went away (exited, closed, stopped answering) while the call ran.
 * Transient: the server is restarted.
 */
export class McpServerLostError extends YiemError {
  override name = "McpServerLostError";
  constructor(message: string) {
    super(message, { retry: "transient" });
  }
}

/** A call came while its MCP server was down (restarting). Transient: it is restarting. */
export class McpServerDownError extends YiemError {
  override name = "McpServerDownError";
  constructor(message: string) {
    super(message, { retry: "transient" });
  }
}

/** A listing of a server's tools went past one of its bounds (`McpListBounds`); the message names it. Terminal. */
export class McpToolListError extends YiemError {
  override name = "McpToolListError";
}
