/**
 * The reference server `@modelcontextprotocol/server-everything` over Streamable HTTP on
 * 127.0.0.1 (its own launcher listens on every address): a session per client, as its
 * launcher keeps them. Listens on `PORT` (0: a free one) and prints `listening <port>`.
 */
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

/** @type {Map<string, StreamableHTTPServerTransport>} */
const transports = new Map();

/** @param {import("node:http").IncomingMessage} req */
async function transportFor(req) {
  const id = req.headers["mcp-session-id"];
  if (typeof id === "string") return transports.get(id);
  if (req.method !== "POST") return undefined;
  const { server } = createServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => {
      transports.set(sessionId, transport);
    },
  });
  await server.connect(transport);
  return transport;
}

const http = createHttpServer(async (req, res) => {
  const transport = await transportFor(req);
  if (!transport) {
    res.writeHead(404).end("no such session");
    return;
  }
  await transport.handleRequest(req, res);
});
http.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = http.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
});
