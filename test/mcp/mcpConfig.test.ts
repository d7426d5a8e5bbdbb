// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax, tested here
import { writeFileSync } from "node:fs";
import { McpConfigError, readMcpConfig } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { writeMcpConfig } from "../support/mcp/mcpServers.js";

function problemOf(servers: unknown, env: NodeJS.ProcessEnv = {}): string {
  const file = writeMcpConfig(servers as Record<string, unknown>);
  try {
    readMcpConfig(file, env);
  } catch (err) {
    expect(err).toBeInstanceOf(McpConfigError);
    return (err as Error).message.replace(file, "<file>");
  }
  throw new Error("the config was accepted");
}

describe("YIEM_MCP_CONFIG files", () => {
  it("reads stdio and HTTP servers with their options, expanding ${VAR} from the environment", () => {
    const file = writeMcpConfig({
      git: {
        command: "node",
        args: ["server.js", "${REPO:-/srv/repo}"],
        env: { TOKEN: "${GIT_TOKEN}" },
        cwd: "servers",
        retries: 1,
        tools: { log: { timeoutMs: 2000, approval: "always" } },
      },
      web: {
        url: "http://127.0.0.1:9/mcp",
        headers: { authorization: "Bearer ${WEB_TOKEN}" },
        toolPrefix: "",
      },
      off: { command: "nothing", disabled: true },
    });
    const config = readMcpConfig(file, { GIT_TOKEN: "g1", WEB_TOKEN: "w1" });
    expect(config.servers.map((server) => server.name)).toEqual(["git", "web"]);
    expect(config.servers[0]).toMatchObject({
      transport: "stdio",
      args: ["server.js", "/srv/repo"],
      env: { TOKEN: "g1" },
      cwd: file.replace(/mcp\.json$/, "servers"),
      retries: 1,
      toolPrefix: "git",
      tools: { log: { timeoutMs: 2000, approval: "always" } },
    });
    expect(config.servers[1]).toMatchObject({
      transport: "http",
      headers: { authorization: "Bearer w1" },
      toolPrefix: "",
    });
  });

  it("names the file, the server and the field of what is wrong", () => {
    expect(problemOf({ git: { command: "x", tools: { log: { timeoutMs: -1 } } } })).toBe(
      'YIEM_MCP_CONFIG <file>: server "git": tools.log.timeoutMs: Too small: expected number to be >0',
    );
    expect(problemOf({ git: { command: "x", timeoutMS: 5 } })).toMatch(
      /^YIEM_MCP_CONFIG <file>: server "git": Unrecognized key: "timeoutMS"$/,
    );
    expect(problemOf({ git: { args: [] } })).toBe(
      'YIEM_MCP_CONFIG <file>: server "git": needs exactly one of "command" (stdio) or "url" (Streamable HTTP)',
    );
    expect(problemOf({ "a:b": { command: "x" } })).toMatch(/server "a:b": the name must match/);
    expect(problemOf({ git: { command: "x", queue: "a:b" } })).toMatch(
      /server "git": queue: must match/,
    );
    expect(problemOf({ web: { url: "ftp://x" } })).toMatch(/server "web": url: /);
    expect(problemOf({ git: { command: "x", env: { T: "${MISSING}" } } })).toBe(
      'YIEM_MCP_CONFIG <file>: server "git": env.T: ${MISSING} is not set',
    );
    expect(problemOf([])).toBe(
      "YIEM_MCP_CONFIG <file>: mcpServers: must be an object of servers by name",
    );
  });

  it("bounds tool listings by default and reads the bounds a server sets", () => {
    const config = readMcpConfig(
      writeMcpConfig({
        plain: { command: "x" },
        tight: { command: "x", listMaxPages: 3, listMaxTools: 50, listIntervalMs: 0 },
      }),
    );
    expect(config.servers.map((server) => server.list)).toEqual([
      {
        maxPages: 100,
        maxTools: 1000,
        maxBytes: 4 * 1024 * 1024,
        timeoutMs: 30_000,
        intervalMs: 1000,
      },
      { maxPages: 3, maxTools: 50, maxBytes: 4 * 1024 * 1024, timeoutMs: 30_000, intervalMs: 0 },
    ]);
  });

  it("refuses a tool prefix that makes agent-call names, or that two servers share (issue 34, finding 17)", () => {
    expect(problemOf({ agent: { command: "x" } })).toBe(
      'YIEM_MCP_CONFIG <file>: server "agent": the tool prefix "agent" would name its tools agent__<tool>, which names agent calls (agents calling agents); set another "toolPrefix"',
    );
    expect(problemOf({ git: { command: "x", toolPrefix: "agent" } })).toMatch(
      /^YIEM_MCP_CONFIG <file>: server "git": toolPrefix: the tool prefix "agent" would name/,
    );
    expect(problemOf({ git: { command: "x" }, other: { command: "y", toolPrefix: "git" } })).toBe(
      'YIEM_MCP_CONFIG <file>: server "other": toolPrefix: the tool prefix "git" is also that of server "git": their tools would have the same names; give one another "toolPrefix"',
    );
    const bare = readMcpConfig(
      writeMcpConfig({
        agent: { command: "x", toolPrefix: "agents" },
        a: { command: "x", toolPrefix: "" },
        b: { command: "y", toolPrefix: "" },
      }),
    );
    expect(bare.servers.map((server) => server.toolPrefix)).toEqual(["agents", "", ""]);
  });

  it("says when the file is missing or not JSON", () => {
    expect(() => readMcpConfig("/nonexistent/mcp.json")).toThrow(
      /^YIEM_MCP_CONFIG \/nonexistent\/mcp\.json: cannot read: ENOENT/,
    );
    const file = writeMcpConfig({});
    writeFileSync(file, "{ not json");
    expect(() => readMcpConfig(file)).toThrow(/: not JSON: /);
  });
});
