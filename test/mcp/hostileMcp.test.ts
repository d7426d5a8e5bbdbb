/**
 * A tool worker facing MCP servers that misbehave on purpose (issue 34, findings 3, 15, 17): a
 * `tools/list` that never ends (at start, and after a `list_changed` on a running worker), a
 * flood of `list_changed` notifications, and tool names that collide. The worker is the
 * compiled one, with a small heap: a listing that grew without end would abort it in seconds.
 */
import { YiemClient } from "@yiem/core/client";
import { logEntries, logMessage, startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostileStdio, writeMcpConfig } from "../support/mcp/mcpServers.js";
import { spawnCommand } from "../support/processes.js";

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a tool worker facing hostile MCP servers (issue 34)", () => {
  it("bounds every tool listing, coalesces a list_changed flood, refuses colliding names, and keeps serving", async () => {
    const config = writeMcpConfig({
      endless: hostileStdio("endless"),
      later: hostileStdio("later"),
      flood: hostileStdio("flood"),
      bare: hostileStdio("normal", { toolPrefix: "" }),
    });
    const worker = spawnCommand(["node", "apps/tool-worker/dist/main.bundle.js"], {
      REDIS_URL: redis.url,
      YIEM_PREFIX: redis.prefix,
      YIEM_WORKER_ID: "hostile-mcp-worker",
      YIEM_MCP_CONFIG: config,
      NODE_OPTIONS: "--max-old-space-size=192",
    });
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    try {
      // Finding 3, at start: the endless listing fails on its bound and the worker gets ready.
      await worker.waitForLine(logMessage("tool worker ready"), 30_000);
      const [refused] = logEntries(
        worker,
        "mcp tool listing over its bounds; none of the server's tools are served",
      );
      expect(refused).toMatchObject({
        mcpServer: "endless",
        err: 'MCP server "endless": its tools/list went past 100 pages (listMaxPages)',
      });
      // Finding 3, on a running worker: the server keeps the tools of its last good listing.
      await worker.waitForLine(
        logMessage(
          "mcp tool listing over its bounds; the server keeps the tools of its last listing",
        ),
        30_000,
      );
      // Finding 15: 20,000 notifications make a listing a second and one log line, not 20,000.
      await worker.waitForLine((line) => line.includes("flood sent"), 60_000);
      await sleep(2500);
      const floodLines = logEntries(worker, "mcp server stderr").filter(
        (entry) => entry.mcpServer === "flood",
      );
      const timeOf = (text: string) =>
        Number(floodLines.find((entry) => entry.stderr === text)?.time);
      const floodSeconds = (timeOf("flood sent") - timeOf("flood started")) / 1000;
      const listings = floodLines.filter((entry) => String(entry.stderr).startsWith("listing"));
      expect(listings.length).toBeGreaterThanOrEqual(2); // the first, and one after the flood
      expect(listings.length).toBeLessThanOrEqual(Math.ceil(floodSeconds) + 4);
      const registered = logEntries(worker, "mcp tools registered");
      const atInfo = registered.filter((e) => e.mcpServer === "flood" && Number(e.level) >= 30);
      expect(atInfo).toHaveLength(1);
      // Finding 17: names that collide are skipped, with a warning naming both.
      const skipped = logEntries(worker, "mcp tool skipped").filter((e) => e.mcpServer === "bare");
      expect(skipped).toEqual([
        expect.objectContaining({
          tool: "log_show",
          reason: 'its Yiem name log_show is that of MCP tool "log.show"',
        }),
        expect.objectContaining({
          tool: "agent__x",
          reason: expect.stringContaining('starts with "agent__", which names agent calls'),
        }),
      ]);
      // The worker announces the tools of every server that listed within its bounds.
      const [info] = (await client.workers()).filter((w) => w.workerId === "hostile-mcp-worker");
      expect(info?.tools).toEqual(
        expect.arrayContaining(["later__tree", "flood__tree", "tree", "log_show"]),
      );
      expect(info?.tools.some((name) => name.startsWith("endless__"))).toBe(false);
      expect(info?.tools).not.toContain("agent__x");
      expect(worker.child.exitCode).toBeNull();
      worker.signal("SIGTERM");
      expect(await worker.exited).toBe(0);
    } finally {
      await client.close();
      await worker.stop(1000);
    }
  }, 120_000);
});
