/**
 * An MCP server over stdio that misbehaves on purpose (issue 34), as `HOSTILE_MCP` says:
 *
 * - `normal` (default): lists `tree` (a recursive JSON Schema), `log.show` and `log_show` (one
 *   Yiem name for both) and `agent__x` (an agent call's name under `"toolPrefix": ""`); every
 *   call answers `<tool> ran`.
 * - `endless`: every `tools/list` page names a next cursor, forever (5 tools of 1 KB a page).
 * - `later`: lists as `normal`, then half a second after its first listing turns `endless` and
 *   announces it with `notifications/tools/list_changed` (after the listing, not after its
 *   start: a worker slow to list it, on a loaded machine, still gets a good first listing).
 * - `flood`: lists as `normal`, then sends 20,000 `list_changed` notifications between
 *   `flood started` and `flood sent` on stderr; it writes `listing <n>` there for each
 *   `tools/list` it answers.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const mode = process.env.HOSTILE_MCP ?? "normal";
const object = { type: "object" };
const treeSchema = {
  type: "object",
  properties: { root: { $ref: "#/definitions/node" } },
  required: ["root"],
  definitions: {
    node: {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/definitions/node" } } },
    },
  },
};
const normalTools = [
  { name: "tree", description: "Takes a tree of nodes", inputSchema: treeSchema },
  { name: "log.show", description: "Shows the log", inputSchema: object },
  { name: "log_show", description: "Shows the log too", inputSchema: object },
  { name: "agent__x", description: "Looks like an agent call", inputSchema: object },
];

let endless = mode === "endless";
let listings = 0;
const server = new Server(
  { name: "yiem-hostile", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  listings += 1;
  if (mode === "flood") console.error(`listing ${listings}`);
  if (mode === "later" && listings === 1) setTimeout(turnEndless, 500);
  if (!endless) return { tools: normalTools };
  const page = Number(request.params?.cursor ?? 0);
  const tools = Array.from({ length: 5 }, (_, i) => ({
    name: `t${page}_${i}`,
    description: "x".repeat(1000),
    inputSchema: object,
  }));
  return { tools, nextCursor: String(page + 1) };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: `${request.params.name} ran` }],
}));
await server.connect(new StdioServerTransport());

function turnEndless() {
  endless = true;
  void server.sendToolListChanged();
}

if (mode === "flood") {
  setTimeout(async () => {
    console.error("flood started");
    for (let i = 0; i < 20_000; i++) await server.sendToolListChanged();
    console.error("flood sent");
  }, 500);
}
