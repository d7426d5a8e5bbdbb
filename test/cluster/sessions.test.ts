import { randomUUID } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BusEvent, ResponseTimeoutError, YiemClient } from "@yiem/core";
import { toolQueueName } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** `turn N`: one sleepFor call, then "answer to turn N"; `abort me`: a call that waits for its abort plus one nobody serves. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const text = String(lastUser?.content ?? "");
  if (messages.at(-1)?.role === "tool")
    return { kind: "text", text: `answer to ${text}`, delayMs: 50 };
  if (text === "abort me") {
    return {
      kind: "toolCalls",
      calls: [
        { id: "a1", name: "waitForAbort", arguments: { label: "first" } },
        { id: "a2", name: "unservedQueue", arguments: {} },
      ],
    };
  }
  return {
    kind: "toolCalls",
    delayMs: 50,
    calls: [{ name: "sleepFor", arguments: { ms: 150, label: text } }],
  };
}

let ledger: string;

const cluster = useTestCluster(async () => {
  ledger = join(await mkdtemp(join(tmpdir(), "yiem-ledger-")), "ledger.txt");
  return {
    workers: 2,
    coordinators: 2,
    model: { respond },
    env: { YIEM_TEST_LEDGER: ledger },
  };
});

function textOf(response: { content: Array<{ type: string; text?: string }> }): string {
  return response.content.map((block) => block.text ?? "").join("");
}

async function collect(sessionId: string, count: number): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  let ends = 0;
  for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
    events.push(event);
    if (event.type === "agentEnd" && ++ends === count) break;
  }
  return events;
}

describe("sessions on a cluster of two coordinators", () => {
  it("answers a session's inputs in order and never runs two of its runs at once", async () => {
    const sessionId = randomUUID();
    const sent = [];
    for (let i = 1; i <= 5; i++)
      sent.push(await cluster.client.send(`turn ${i}`, { sessionId, followUp: true }));
    const responses = await Promise.all(
      sent.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 30_000 })),
    );
    expect(responses.map(textOf)).toEqual([1, 2, 3, 4, 5].map((i) => `answer to turn ${i}`));
    const events = await collect(sessionId, 5);
    let open: string | undefined;
    for (const event of events) {
      if (event.type === "agentStart") {
        expect(open).toBeUndefined();
        open = event.runId;
      } else {
        expect(event.runId).toBe(open);
      }
      if (event.type === "agentEnd") open = undefined;
    }
    const transcript = await cluster.client.messages(sessionId);
    const users = transcript.filter((m) => m.role === "user").map((m) => textOf(m as never));
    expect(users).toEqual([1, 2, 3, 4, 5].map((i) => `turn ${i}`));
  });

  it("keeps many sessions apart when they run at the same time", async () => {
    const sends = await Promise.all(
      Array.from({ length: 12 }, (_, i) => cluster.client.send(`solo ${i}`)),
    );
    const responses = await Promise.all(
      sends.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 30_000 })),
    );
    expect(responses.map(textOf)).toEqual(sends.map((_, i) => `answer to solo ${i}`));
  });

  it("waits for a run another client sent, answered before or after the wait began, and gives up on one nobody answers", async () => {
    const other = new YiemClient({ redis: cluster.redis.url, prefix: cluster.redis.prefix });
    try {
      const early = await other.send("early");
      await other.waitForResponse(early.runId, { timeoutMs: 30_000 }); // stored before we wait
      const late = await other.send("late");
      const [before, after] = await Promise.all([
        cluster.client.waitForResponse(early.runId, { timeoutMs: 30_000 }),
        cluster.client.waitForResponse(late.runId, { timeoutMs: 30_000 }),
      ]);
      expect([textOf(before), textOf(after)]).toEqual(["answer to early", "answer to late"]);
    } finally {
      await other.close();
    }
    const nobody = cluster.client.waitForResponse(randomUUID(), { timeoutMs: 300 });
    await expect(nobody).rejects.toBeInstanceOf(ResponseTimeoutError);
  });

  it("aborts a run: the worker's tool sees its signal, waiting calls are removed, no further LLM call", async () => {
    const sessionId = randomUUID();
    const watch = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecUpdate" && event.toolCallId === "a1") return event;
      }
    })();
    const requestsBefore = cluster.model.requests.length;
    const { runId } = await cluster.client.send("abort me", { sessionId });
    const update = await watch;
    await cluster.client.abort(sessionId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    expect(cluster.model.requests.length - requestsBefore).toBe(1);
    const worker = cluster.workers.find((w) =>
      w.lines.some((l) => l.includes(`"workerId":"${update?.workerId}"`)),
    );
    expect(await readFile(ledger, "utf8")).toContain(`aborted first ${worker?.pid}`);
    const queue = new Queue(toolQueueName("nobody"), {
      connection: { url: cluster.redis.url },
      prefix: `${cluster.redis.prefix}:bull`,
    });
    const counts = await queue.getJobCounts("waiting", "active");
    await queue.close();
    expect([counts.waiting, counts.active]).toEqual([0, 0]);
    const transcript = await cluster.client.messages(sessionId);
    const results = transcript
      .filter((m) => m.role === "toolResult")
      .map((m) => [m.toolCallId, textOf(m as never), m.role === "toolResult" && m.isError]);
    // a1's error is the coordinator's "Operation aborted" or, when the worker's answer wins the
    // race, the tool's own reaction to its signal; either way one error result per call.
    expect(results).toEqual([
      ["a1", expect.stringMatching(/^(Operation aborted|stopped by abort)$/), true],
      ["a2", "Operation aborted", true],
    ]);
  });
});

describe("the client refuses what the coordinators would refuse", () => {
  it("rejects malformed input in send, naming the field, before any job reaches Redis", async () => {
    const queue = new Queue("coordinator", {
      connection: { url: cluster.redis.url },
      prefix: `${cluster.redis.prefix}:bull`,
    });
    const before = await queue.getJobCountByTypes("waiting", "active", "completed", "failed");
    const bad: Array<[unknown, RegExp]> = [
      [{ role: "user", content: [{ type: "text", text: {} }] }, /input\.content\[0\]\.text/],
      [{ role: "user", content: [] }, /input\.content: must not be empty/],
      [
        { role: "user", content: [{ type: "image", mimeType: "image/png" }] },
        /input\.content\[0\]\.data/,
      ],
      ["z".repeat(1024 * 1024 + 1), /over the 1048576-byte cap/],
    ];
    for (const [input, reason] of bad) {
      await expect(cluster.client.send(input as string)).rejects.toThrow(reason);
    }
    await expect(cluster.client.send("hi", { sessionId: "a}b" })).rejects.toThrow(/sessionId/);
    const after = await queue.getJobCountByTypes("waiting", "active", "completed", "failed");
    await queue.close();
    expect(after).toBe(before);
  });
});

describe("the coordinator's HTTP side", () => {
  it("serves Bull Board with every queue, /healthz and /metrics", async () => {
    const base = cluster.coordinatorUrls[0];
    const page = await fetch(`${base}/admin/queues`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");
    const api = (await (await fetch(`${base}/admin/queues/api/queues`)).json()) as {
      queues: Array<{ name: string }>;
    };
    expect(api.queues.map((q) => q.name)).toEqual(
      expect.arrayContaining(["coordinator", "tools-default", "tools-nobody"]),
    );
    const health = (await (await fetch(`${base}/healthz`)).json()) as { status: string };
    expect(health.status).toBe("ok");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain("yiem_queue_jobs");
    const all = await Promise.all(
      cluster.coordinatorUrls.map(async (url) => (await fetch(`${url}/metrics`)).text()),
    );
    expect(all.join("\n")).toMatch(/yiem_tool_calls_total\{tool="sleepFor",outcome="ok"\} [1-9]/);
    expect(all.join("\n")).toMatch(/yiem_llm_call_duration_seconds_count\{outcome="ok"\} [1-9]/);
  });
});
