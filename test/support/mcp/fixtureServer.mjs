/**
 * A tiny MCP server over stdio for what server-everything cannot show on demand: a tool list
 * that changes when asked (`add-tool` registers `greet`, `remove-tool` removes it, each
 * announced with `notifications/tools/list_changed`), an `isError` result (`fail`), and a call
 * that waits until it is cancelled (`wait`), with `cancelled` telling how many were.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "yiem-fixture", version: "1.0.0" });
/** @type {import("@modelcontextprotocol/sdk/server/mcp.js").RegisteredTool | undefined} */
let greet;
let cancelled = 0;
/** @param {string} value */
const text = (value) => ({ content: [{ type: "text", text: value }] });

server.registerTool("add-tool", { description: "Adds the greet tool" }, async () => {
  greet ??= server.registerTool(
    "greet",
    { description: "Greets", inputSchema: { name: z.string() } },
    async ({ name }) => text(`Hello, ${name}`),
  );
  return text("added greet");
});
server.registerTool("remove-tool", { description: "Removes the greet tool" }, async () => {
  greet?.remove();
  greet = undefined;
  return text("removed greet");
});
server.registerTool("fail", { description: "Always fails" }, async () => ({
  ...text("the disk is full"),
  isError: true,
}));
server.registerTool("wait", { description: "Waits until cancelled" }, async (extra) => {
  await new Promise((resolve) => {
    extra.signal.addEventListener("abort", () => {
      cancelled += 1;
      resolve();
    });
  });
  return text("cancelled");
});
server.registerTool("cancelled", { description: "How many waits were cancelled" }, async () =>
  text(String(cancelled)),
);
console.error("fixture server ready");
await server.connect(new StdioServerTransport());
