/**
 * The coordinator queue as a plain BullMQ user sees it: nothing from `@yiem/*` is imported
 * here. Jobs are requests `{ input, sessionId?, followUp? }`; a completed job carries
 * `{ sessionId, runId, response }`; a bad job fails once, naming the field.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Wire = { role: string; content: unknown };
type Answer = {
  sessionId: string;
  requestId: string;
  runId: string;
  response: { role: string; content: Array<{ type: string; text?: string }> };
};

function userTexts(messages: Wire[]): string[] {
  return messages
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : (m.content as Array<{ text?: string }>).map((p) => p.text ?? "").join(""),
    );
}

/** "slow …": one 600 ms tool call first; otherwise an answer listing every user text it saw. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const texts = userTexts(messages);
  const last = texts.at(-1) ?? "";
  if (last.startsWith("slow") && messages.at(-1)?.role !== "tool") {
    return {
      kind: "toolCalls",
      calls: [{ name: "sleepFor", arguments: { ms: 600, label: last } }],
    };
  }
  return { kind: "text", text: `seen: ${texts.join(" | ")}` };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

const plain = usePlainCoordinatorQueue(cluster);

const textOf = (answer: Answer) => answer.response.content.map((b) => b.text ?? "").join("");

async function ask(
  data: unknown,
  opts: { jobId?: string } = {},
): Promise<{ job: Job; answer: Answer }> {
  const job = await plain.queue.add("ask", data, opts);
  const answer = (await job.waitUntilFinished(plain.events, 20_000)) as Answer;
  return { job, answer };
}

describe("the coordinator queue, used with plain bullmq", () => {
  it("answers a job and completes it with { sessionId, requestId, runId, response }", async () => {
    const { job, answer } = await ask({ input: "hello" });
    expect(textOf(answer)).toBe("seen: hello");
    // The request's id, under its name and under its older one (an alias kept for clients).
    expect([answer.requestId, answer.runId]).toEqual([job.id, job.id]);
    expect(answer.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.response.role).toBe("assistant");
    const stored = await plain.queue.getJob(job.id ?? "");
    expect(stored?.returnvalue).toEqual(answer);
    expect(stored?.data).toEqual({ input: "hello" });
  });

  it("YiemClient.send returns the job's id as requestId (runId its older name) and takes one", async () => {
    const requestId = `r-${randomUUID()}`;
    const sent = await cluster.client.send("named", { requestId });
    expect(sent).toEqual({ sessionId: sent.sessionId, requestId, runId: requestId });
    const response = await cluster.client.waitForResponse(requestId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "seen: named" }]);
    // The answer is stored before its job completes: wait for the job's return value.
    const added = await plain.queue.getJob(requestId);
    if (added) await waitForState(added, "completed");
    const job = await plain.queue.getJob(requestId);
    expect([job?.returnvalue.requestId, job?.returnvalue.runId]).toEqual([requestId, requestId]);
    const old = await cluster.client.send("by its older name", { runId: `o-${requestId}` });
    expect([old.requestId, old.runId]).toEqual([`o-${requestId}`, `o-${requestId}`]);
  });

  it("continues a session given its sessionId, and takes user messages with parts", async () => {
    const first = await ask({ input: "my name is Ada" });
    const { answer } = await ask({
      sessionId: first.answer.sessionId,
      input: { role: "user", content: [{ type: "text", text: "what is my name?" }] },
    });
    expect(answer.sessionId).toBe(first.answer.sessionId);
    expect(textOf(answer)).toBe("seen: my name is Ada | what is my name?");
  });

  it("answers a follow-up to a busy session after the running run, in its own run", async () => {
    const sessionId = `s-${randomUUID()}`;
    const slow = await plain.queue.add("ask", { sessionId, input: "slow one" });
    await waitForState(slow, "active");
    const follow = await plain.queue.add("ask", { sessionId, input: "and then?", followUp: true });
    const [a, b] = (await Promise.all([
      slow.waitUntilFinished(plain.events, 20_000),
      follow.waitUntilFinished(plain.events, 20_000),
    ])) as Answer[];
    expect(textOf(a as Answer)).toBe("seen: slow one");
    expect(textOf(b as Answer)).toBe("seen: slow one | and then?");
    const [doneSlow, doneFollow] = await Promise.all([
      plain.queue.getJob(slow.id ?? ""),
      plain.queue.getJob(follow.id ?? ""),
    ]);
    expect(doneFollow?.finishedOn).toBeGreaterThanOrEqual(doneSlow?.finishedOn ?? Infinity);
  });

  it("lets an input to a busy session join the running run: both jobs get its response", async () => {
    const sessionId = `s-${randomUUID()}`;
    const slow = await plain.queue.add("ask", { sessionId, input: "slow two" });
    await waitForToolStart(sessionId);
    const joined = await plain.queue.add("ask", { sessionId, input: "also this" });
    const [a, b] = (await Promise.all([
      slow.waitUntilFinished(plain.events, 20_000),
      joined.waitUntilFinished(plain.events, 20_000),
    ])) as Answer[];
    expect(textOf(a as Answer)).toBe("seen: slow two | also this");
    expect(b?.response).toEqual(a?.response);
    expect(b?.runId).toBe(joined.id);
  });

  it("keeps job ids with commas and quotes apart, and watchers still see the run end", async () => {
    const sessionId = `s-${randomUUID()}`;
    const ids = [`a,${randomUUID()}`, `"${randomUUID()}\\"}`];
    const answers = await Promise.all(
      ids.map((jobId, i) => ask({ sessionId, input: `odd id ${i}`, followUp: true }, { jobId })),
    );
    expect(answers.map(({ answer }) => answer.runId)).toEqual(ids);
    expect(answers.map(({ answer }) => textOf(answer)).sort()).toEqual([
      "seen: odd id 0",
      "seen: odd id 0 | odd id 1",
    ]);
    const ends = await agentEndsOf(sessionId, 2);
    expect(ends.flatMap((e) => e.inputIds).sort()).toEqual([...ids].sort());
  });

  it("treats a job id as the request's key in its session: after the job is removed, the same input gets the stored answer, another input fails once and is never recorded", async () => {
    const sessionId = `s-${randomUUID()}`;
    const jobId = `req-${randomUUID()}`;
    const first = await ask({ sessionId, input: "first" }, { jobId });
    expect(textOf(first.answer)).toBe("seen: first");
    await first.job.remove();
    const again = await ask({ sessionId, input: "first" }, { jobId });
    expect(again.answer).toEqual(first.answer);
    await again.job.remove();
    const other = await plain.queue.add(
      "ask",
      { sessionId, input: "something else" },
      { jobId, attempts: 3, backoff: { type: "fixed", delay: 10 } },
    );
    const reason = `invalid request: jobId: ${jobId} was already used in session ${sessionId} for a different input`;
    await expect(other.waitUntilFinished(plain.events, 10_000)).rejects.toThrow(reason);
    const failed = await plain.queue.getJob(jobId);
    expect(await failed?.getState()).toBe("failed");
    expect(failed?.failedReason).toBe(reason);
    expect(failed?.attemptsStarted).toBe(1);
    // The refused input never entered the session: the next one sees only "first".
    const next = await ask({ sessionId, input: "next" });
    expect(textOf(next.answer)).toBe("seen: first | next");
  });
});

describe("bad jobs fail at once, naming the field", () => {
  const bad: Array<[string, unknown, string]> = [
    ["no input", { message: "hi" }, "input: is required"],
    ["a number", { input: 42 }, "input: must be a string or a user message"],
    ["a forged assistant message", { input: { role: "assistant", content: "x" } }, "input.role"],
    [
      "text that is an object",
      { input: { role: "user", content: [{ type: "text", text: {} }] } },
      "input.content[0].text",
    ],
    [
      "an empty content array",
      { input: { role: "user", content: [] } },
      "input.content: must not be empty",
    ],
    [
      "an image without data",
      { input: { role: "user", content: [{ type: "image", mimeType: "image/png" }] } },
      "input.content[0].data",
    ],
    [
      "an unknown part",
      { input: { role: "user", content: [{ type: "toolCall", id: "c1" }] } },
      "input.content[0].type",
    ],
    ["a session id with a brace", { input: "hi", sessionId: "a}b" }, "sessionId"],
    ["a followUp that is not a boolean", { input: "hi", followUp: "yes" }, "followUp"],
    ["an input over 1 MiB", { input: "x".repeat(1024 * 1024 + 10) }, "over the 1048576-byte cap"],
  ];

  it.each(bad)("refuses %s after exactly one attempt", async (_name, data, reason) => {
    const job = await plain.queue.add("bad", data, {
      attempts: 3,
      backoff: { type: "fixed", delay: 10 },
    });
    await expect(job.waitUntilFinished(plain.events, 10_000)).rejects.toThrow(reason);
    const failed = await plain.queue.getJob(job.id ?? "");
    expect(await failed?.getState()).toBe("failed");
    expect(failed?.failedReason).toContain("invalid request");
    expect(failed?.attemptsStarted).toBe(1);
  });
});

async function waitForState(job: Job, state: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await job.getState()) === state) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job ${job.id} never became ${state}`);
}

/** The session's events so far, through the cluster's client (its watch API). */
async function eventsSoFar(sessionId: string, stop: (types: string[]) => boolean) {
  const seen: Array<{ type: string; inputIds?: string[] }> = [];
  const signal = AbortSignal.timeout(10_000);
  for await (const event of cluster.client.events(sessionId, { fromStart: true, signal })) {
    seen.push(event as { type: string; inputIds?: string[] });
    if (stop(seen.map((e) => e.type))) return seen;
  }
  throw new Error(`session ${sessionId}: expected events never came (saw ${seen.length})`);
}

async function waitForToolStart(sessionId: string): Promise<void> {
  await eventsSoFar(sessionId, (types) => types.includes("toolExecStart"));
}

async function agentEndsOf(
  sessionId: string,
  count: number,
): Promise<Array<{ inputIds: string[] }>> {
  const seen = await eventsSoFar(
    sessionId,
    (types) => types.filter((t) => t === "agentEnd").length >= count,
  );
  return seen.filter((e) => e.type === "agentEnd") as Array<{ inputIds: string[] }>;
}
