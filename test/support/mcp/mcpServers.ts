import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProcess } from "@yiem/testing";
import { repoRoot, spawnCommand } from "../processes.js";

/** A config entry that spawns the reference server over stdio. */
export function everythingStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const entry = join(
    repoRoot,
    "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
  );
  return { command: process.execPath, args: [entry, "stdio"], ...extra };
}

/** A config entry that spawns the fixture server (`fixtureServer.ts`) over stdio. */
export function fixtureStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const entry = join(repoRoot, "test/support/mcp/fixtureServer.mjs");
  return { command: process.execPath, args: [entry], ...extra };
}

/** Writes `{ mcpServers: servers }` to a file of its own; returns its path. */
export function writeMcpConfig(servers: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), "yiem-mcp-")), "mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

/** The pids of the live child processes of `parentPid` whose command line has `match`. */
export function childPidsOf(parentPid: number, match: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== parentPid || fields[0] === "Z") continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(match)) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/** The reference server over Streamable HTTP on 127.0.0.1 (`everythingHttp.mjs`), on `port` (0: a free one). */
export async function startEverythingHttp(
  port = 0,
): Promise<{ url: string; port: number; server: TestProcess }> {
  const server = spawnCommand(["node", "test/support/mcp/everythingHttp.mjs"], {
    PORT: String(port),
  });
  const line = await server.waitForLine((l) => l.startsWith("listening "));
  const bound = Number(line.split(" ")[1]);
  return { url: `http://127.0.0.1:${bound}/mcp`, port: bound, server };
}

/** Polls `check` every 25 ms until it holds; fails after `timeoutMs` with `what`. */
export async function waitFor(
  what: string,
  check: () => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A config entry that spawns the hostile server (`hostileServer.mjs`) over stdio in `mode`
 * (`normal`, `endless`, `later` or `flood`; see that file).
 */
export function hostileStdio(
  mode: "normal" | "endless" | "later" | "flood",
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const entry = join(repoRoot, "test/support/mcp/hostileServer.mjs");
  return { command: process.execPath, args: [entry], env: { HOSTILE_MCP: mode }, ...extra };
}
