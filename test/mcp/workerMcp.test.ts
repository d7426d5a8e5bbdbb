import { existsSync } from "node:fs";
import { YiemClient } from "@yiem/core/client";
import { logEntries, logMessage, startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childPidsOf, everythingStdio, writeMcpConfig } from "../support/mcp/mcpServers.js";
import { spawnCommand } from "../support/processes.js";

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** The compiled worker (`npm ci` and `tsc -b` build it): it starts in a fraction of tsx's time. */
function startWorker(mcpConfig: string) {
  return spawnCommand(["node", "apps/tool-worker/dist/main.bundle.js"], {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    YIEM_WORKER_ID: "mcp-worker",
    YIEM_MCP_CONFIG: mcpConfig,
  });
}

describe("a tool worker with YIEM_MCP_CONFIG", () => {
  it("connects to its MCP servers, logs and announces their tools, and closes their processes on SIGTERM", async () => {
    const worker = startWorker(
      writeMcpConfig({ everything: everythingStdio({ allowTools: ["echo", "get-sum"] }) }),
    );
    await worker.waitForLine(logMessage("tool worker ready"), 30_000);
    const [registered] = logEntries(worker, "mcp tools registered");
    expect(registered).toMatchObject({
      mcpServer: "everything",
      tools: ["everything__echo", "everything__get-sum"],
    });
    expect(logEntries(worker, "mcp server stderr")[0]).toMatchObject({ mcpServer: "everything" });
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    try {
      const [info] = (await client.workers()).filter((w) => w.workerId === "mcp-worker");
      expect(info?.tools).toEqual(
        expect.arrayContaining(["everything__echo", "everything__get-sum"]),
      );
    } finally {
      await client.close();
    }
    const servers = childPidsOf(worker.pid, "server-everything");
    expect(servers).toHaveLength(1);
    worker.signal("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect(servers.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
  });

  it("refuses to start with an invalid config, naming the file, the server and the field", async () => {
    const file = writeMcpConfig({ everything: everythingStdio({ retries: "twice" }) });
    const worker = startWorker(file);
    expect(await worker.exited).toBe(1);
    expect(worker.lines.join("\n")).toContain(
      `tool worker failed to start: YIEM_MCP_CONFIG ${file}: server "everything": retries: Invalid input: expected number, received string`,
    );
  });
});
