import { toolQueueName } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest, ScriptedToolCall } from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const hostile: ScriptedToolCall[] = [
  { id: "h1", name: "sleepFor", arguments: '{"ms": 1, "label": ' },
  { id: "h2", name: "sleepFor", arguments: "[1, 2, 3]" },
  {
    id: "h3",
    name: "sleepFor",
    arguments: JSON.stringify({ ms: 1, label: "x".repeat(300 * 1024) }),
  },
  {
    id: "h4",
    name: "sleepFor",
    arguments: '{"ms": 1, "label": "p", "__proto__": {"polluted": true}}',
  },
  {
    id: "h5",
    name: "sleepFor",
    arguments: '{"ms": 1, "label": "c", "constructor": {"prototype": {}}}',
  },
  { id: "h6", name: "rm -rf /", arguments: {} },
  { id: "h7", name: "patterned", arguments: { id: `${"a".repeat(40_000)}!` } },
  { id: "ok", name: "sleepFor", arguments: { ms: 1, label: "valid" } },
];

/** Turn 1: the hostile batch; turn 2: 70 calls in one message; then echo every result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const lastUser = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
  if (messages.at(-1)?.role === "tool") {
    const results = messages
      .slice(messages.findLastIndex((m) => m.role === "user"))
      .filter((m) => m.role === "tool");
    return { kind: "text", text: results.map((m) => String(m.content)).join("\n") };
  }
  if (lastUser === "flood") {
    return {
      kind: "toolCalls",
      calls: Array.from({ length: 70 }, (_, i) => ({
        id: `f${i}`,
        name: "sleepFor",
        arguments: { ms: 1, label: `f${i}` },
      })),
    };
  }
  return { kind: "toolCalls", calls: hostile };
}

// Completed tool jobs kept (default: removed as they complete), so the board's counts show
// what was dispatched.
const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  env: { YIEM_TOOL_JOB_RETENTION_S: "3600" },
});

async function completedToolJobs(): Promise<number> {
  const queue = new Queue(toolQueueName("default"), {
    connection: { url: cluster.redis.url },
    prefix: `${cluster.redis.prefix}:bull`,
  });
  const counts = await queue.getJobCounts("completed", "failed", "waiting", "active");
  await queue.close();
  return (
    (counts.completed ?? 0) + (counts.failed ?? 0) + (counts.waiting ?? 0) + (counts.active ?? 0)
  );
}

describe("hostile model output becomes error results, never a dispatch or a crash", () => {
  it("answers every hostile call with its error, dispatches only the valid call, and the run goes on", async () => {
    const before = await completedToolJobs();
    const { runId } = await cluster.client.send("be hostile");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    const lines = response.content
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("")
      .split("\n");
    expect(lines).toHaveLength(8);
    expect(lines[0]).toMatch(/^sleepFor: arguments are not valid JSON/);
    expect(lines[1]).toBe("sleepFor: arguments must be a JSON object, got an array");
    expect(lines[2]).toMatch(/^sleepFor: arguments are too large: \d+ bytes \(limit 262144\)/);
    expect(lines[3]).toBe("sleepFor: arguments contain a forbidden key: __proto__");
    expect(lines[4]).toBe("sleepFor: arguments contain a forbidden key: constructor");
    expect(lines[5]).toMatch(/^Tool "rm -rf \/" not found\. Available tools: /);
    expect(lines[6]).toBe('patterned: invalid arguments: "id" must match pattern "^(a+)+$"');
    expect(lines[7]).toBe("valid done");
    expect((await completedToolJobs()) - before).toBe(1);
    for (const process of [...cluster.coordinators, ...cluster.workers])
      expect(process.child.exitCode).toBeNull();
  });

  it("runs the first 64 calls of a message with 70 and refuses the rest", async () => {
    const before = await completedToolJobs();
    const { runId } = await cluster.client.send("flood");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    const lines = response.content
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("")
      .split("\n");
    expect(lines.slice(0, 64).every((line, i) => line === `f${i} done`)).toBe(true);
    expect(lines.slice(64)).toEqual(
      Array(6).fill("too many tool calls in one message: 70 (limit 64); this call was not run"),
    );
    expect((await completedToolJobs()) - before).toBe(64);
  });
});
