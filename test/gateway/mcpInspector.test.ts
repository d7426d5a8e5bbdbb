/**
 * The MCP inspector's CLI (`@modelcontextprotocol/inspector-cli` 1.0.3, what `npx
 * @modelcontextprotocol/inspector --cli` runs, the newest that runs on Node 20) as a process
 * against the gateway's `/mcp` over Streamable HTTP with a key's header: it lists the agents'
 * tools, calls one, and another key cannot continue (or read) that call's session.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";
import { useFaceCluster } from "./faceCluster.js";
import { type GatewayProcess, makeKey, type TestKey } from "./support.js";

const alice = makeKey("alice", { scopes: ["submit", "read"] });
const bob = makeKey("bob", { scopes: ["submit", "read"] });
const faces = useFaceCluster([alice, bob]);
let gateway: GatewayProcess;

beforeAll(() => {
  ({ gateway } = faces);
});

const inspectorCli = join(repoRoot, "node_modules", ".bin", "mcp-inspector-cli");
/**
 * Where the CLI runs: it reads its own package.json as `../package.json` of the working
 * directory (resolved from its module), so it runs from its build folder.
 */
const inspectorCwd = join(
  repoRoot,
  "node_modules",
  "@modelcontextprotocol",
  "inspector-cli",
  "build",
);

/** What one run of the inspector's CLI printed and how it exited. */
interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the inspector's CLI on the gateway's /mcp with `key`'s bearer header and `args`. */
async function runInspector(key: TestKey, args: string[]): Promise<CliRun> {
  const argv = ["--cli", `${gateway.url}/mcp`, "--transport", "http"];
  argv.push("--header", `Authorization: Bearer ${key.secret}`, ...args);
  try {
    const { stdout, stderr } = await promisify(execFile)(inspectorCli, argv, {
      cwd: inspectorCwd,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/** The JSON the CLI printed, parsed. */
function printed(run: CliRun): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** A `tools/call` through the CLI: `default` with `args` as `--tool-arg key=value` pairs. */
async function callDefault(key: TestKey, args: Record<string, string>) {
  const pairs = Object.entries(args).flatMap(([name, value]) => ["--tool-arg", `${name}=${value}`]);
  const run = await runInspector(key, [
    "--method",
    "tools/call",
    "--tool-name",
    "default",
    ...pairs,
  ]);
  return printed(run) as {
    content: Array<{ type: string; text: string }>;
    structuredContent?: { status: string; sessionId: string; runId: string };
    isError?: boolean;
  };
}

describe("the MCP inspector's CLI against /mcp (Streamable HTTP, the key as a header)", () => {
  it("lists the agents the key may use as tools, taking { message, sessionId? }", async () => {
    const { tools } = printed(await runInspector(alice, ["--method", "tools/list"])) as {
      tools: Array<{ name: string; inputSchema: { required?: string[]; properties: object } }>;
    };
    expect(tools.map((tool) => tool.name)).toEqual(["default"]);
    expect(tools[0]?.inputSchema.required).toEqual(["message"]);
    expect(Object.keys(tools[0]?.inputSchema.properties ?? {}).sort()).toEqual([
      "message",
      "sessionId",
    ]);
  });

  it("calls an agent: the run's answer (its tool calls ran on the cluster), its session continued", async () => {
    const first = await callDefault(alice, { message: "pair" });
    expect(first.isError).toBeFalsy();
    expect(first.content[0]?.text).toBe("done: first done | second done");
    expect(first.structuredContent?.status).toBe("completed");
    const sessionId = String(first.structuredContent?.sessionId);
    const next = await callDefault(alice, { message: "recall", sessionId });
    expect(next.content[0]?.text).toBe("heard: pair, recall");
  });

  it("another key cannot continue (or read) that session, and a wrong key is refused", async () => {
    const first = await callDefault(alice, { message: "hello eve" });
    const sessionId = String(first.structuredContent?.sessionId);
    const other = await callDefault(bob, { message: "recall", sessionId });
    expect(other.isError).toBe(true);
    expect(other.content[0]?.text).toBe(`404 not_found: session ${sessionId} not found`);
    const wrong = await runInspector({ ...alice, secret: "yk_not_a_key" }, [
      "--method",
      "tools/list",
    ]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/unauthorized.*unknown API key/);
  });
});
