/**
 * A run parked for approval holds next to nothing on its coordinator: not the request job's
 * input, however large, nor a task, promise or BullMQ job per run, only a small record (its
 * lock's token, its session, its answer's watch). Measured on a coordinator running in this
 * process: 200 requests of 900 KiB each, all parked at once, add to its heap no more than a
 * small record each; 2,000 small ones add under 2 KiB each (a held request kept as a task
 * awaiting its answer cost about 5 KiB); once approved, every request job completes with its
 * answer.
 */

import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type AgentTool, clusterKeys } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

const RUNS = 200;
const INPUT_BYTES = 900 * 1024;
/** What one parked run may keep on its coordinator: a small record, far below its input. */
const PER_RUN_BOUND_BYTES = 32 * 1024;
/** Small runs parked at once, and what each may keep (the target of docs/PERFORMANCE.md). */
const MANY_RUNS = 2000;
/** Small runs parked and approved first, so that their code paths are warm before the baseline. */
const WARM_RUNS = 100;
const MANY_PER_RUN_BOUND_BYTES = 2 * 1024;
/** Approvals sent at once. */
const APPROVALS_IN_FLIGHT = 50;
/** Large requests added at once (each 900 KiB: a few in flight, not all 200). */
const ADDS_IN_FLIGHT = 10;
/** How often the waits below read Redis. */
const POLL_MS = 100;

type Wire = { role: string; content: unknown };

/** Asks `gate` (which needs approval) once, then answers `final <tag>: <result>`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const tag = text.slice(0, text.indexOf(" "));
  if (messages.at(-1)?.role === "tool")
    return { kind: "text", text: `final ${tag}: ${String(messages.at(-1)?.content)}` };
  return { kind: "toolCalls", calls: [{ id: `${tag}-1`, name: "gate", arguments: { tag } }] };
}

const gate: AgentTool = {
  name: "gate",
  label: "Gate",
  description: "Opens once a person approves",
  inputSchema: { type: "object", properties: { tag: { type: "string" } }, required: ["tag"] },
  approval: "always",
  execute: (_id, args) => ({
    content: [{ type: "text", text: `opened ${String(args.tag)}` }],
    details: {},
  }),
};

/** V8's collector, exposed at run time (vitest starts its workers without `--expose-gc`). */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * The heap in use after full collections, without its compiled code (the first thousand runs
 * through a path compile it once, which is no run's memory): the least of three readings half
 * a second apart, so that what the coordinator has in flight for a moment (a round of its
 * periodic reads, a reply being parsed) is not counted as held.
 */
async function heapAfterGc(gc: () => void): Promise<number> {
  const readings: number[] = [];
  for (let reading = 0; reading < 3; reading++) {
    if (reading > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const spaces = getHeapSpaceStatistics().filter((s) => !s.space_name.startsWith("code"));
    readings.push(spaces.reduce((sum, s) => sum + s.space_used_size, 0));
  }
  return Math.min(...readings);
}

const local = useInProcessCoordinator({
  respond,
  tools: [gate],
  storeName: "parked-memory",
  privateRedis: true,
  // Parked runs hold no run slot: ten times as many park through these slots.
  coordinator: { concurrency: RUNS },
});
const plain = usePlainCoordinatorQueue(local);

/** Waits until `count` calls await approval and no session is held (every run parked). */
async function waitUntilParked(count: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const pending = await local.client.pendingApprovals();
    if (pending.length >= count && local.coordinator.heldSessions() === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} runs parked`);
}

/**
 * Adds one request as any BullMQ client does, its input `<tag> ` padded to INPUT_BYTES, and
 * returns its job id (the added job itself, input included, is not kept here).
 */
async function addRequest(tag: string): Promise<string> {
  const input = `${tag} ${"x".repeat(INPUT_BYTES - tag.length - 1)}`;
  const job = await plain.queue.add("request", { input, sessionId: `parked-${tag}` });
  return job.id ?? "";
}

/** Adds one large request per tag (`addRequest`), `ADDS_IN_FLIGHT` at a time; returns their job ids in order. */
async function addRequests(tags: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < tags.length; i += ADDS_IN_FLIGHT)
    ids.push(...(await Promise.all(tags.slice(i, i + ADDS_IN_FLIGHT).map(addRequest))));
  return ids;
}

/** Waits for request job `jobId` to finish and returns its answer's text. */
async function answerOf(jobId: string): Promise<string> {
  const job = await Job.fromId(plain.queue, jobId);
  if (!job) throw new Error(`request job ${jobId} is gone`);
  const result = await job.waitUntilFinished(plain.events, 60_000);
  return result.response.content[0].text;
}

/** Waits until `count` calls are in the index of calls awaiting approval (up to 120 s). */
async function waitUntilIndexed(count: number): Promise<void> {
  const index = clusterKeys(local.redis.prefix).approvalsPending;
  for (let i = 0; i < 120_000 / POLL_MS; i++) {
    if ((await plain.connection.zcard(index)) >= count && local.coordinator.heldSessions() === 0)
      return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`fewer than ${count} calls await approval`);
}

/** Approves `gate` in each of these sessions, `APPROVALS_IN_FLIGHT` at a time. */
async function approveAll(tags: string[]): Promise<void> {
  const left = [...tags];
  const approveNext = async (): Promise<void> => {
    for (let tag = left.shift(); tag !== undefined; tag = left.shift())
      await local.client.approve(`parked-${tag}`, `${tag}-1`);
  };
  await Promise.all(Array.from({ length: APPROVALS_IN_FLIGHT }, approveNext));
}

/** Adds one small request per tag, each to a session of its own, in one `addBulk`. */
async function addSmallRequests(tags: string[]): Promise<void> {
  await plain.queue.addBulk(
    tags.map((tag) => ({
      name: "request",
      data: { input: `${tag} small`, sessionId: `parked-${tag}` },
    })),
  );
}

/** Parks one small run per tag, approves them all and waits until their jobs completed. */
async function parkAndApprove(tags: string[]): Promise<void> {
  const completed = await plain.queue.getCompletedCount();
  const index = clusterKeys(local.redis.prefix).approvalsPending;
  const pending = await plain.connection.zcard(index);
  await addSmallRequests(tags);
  await waitUntilIndexed(pending + tags.length);
  await approveAll(tags);
  await waitUntilCompleted(completed + tags.length);
}

/** Waits until `count` request jobs completed (up to 120 s). */
async function waitUntilCompleted(count: number): Promise<void> {
  for (let i = 0; i < 120_000 / POLL_MS; i++) {
    if ((await plain.queue.getCompletedCount()) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`fewer than ${count} request jobs completed`);
}

describe("a parked run holds nothing on its coordinator", () => {
  it(`keeps under ${PER_RUN_BOUND_BYTES / 1024} KiB of heap per parked 900 KiB request, and completes every request job once approved`, async () => {
    const gc = collector();
    // A first run parks and ends, so the code paths are warm before the baseline.
    const warm = await addRequest("warm");
    await waitUntilParked(1);
    await local.client.approve("parked-warm", "warm-1");
    await answerOf(warm);
    const before = await heapAfterGc(gc);

    const tags = Array.from({ length: RUNS }, (_, i) => `p${i}`);
    const jobs = await addRequests(tags);
    await waitUntilParked(RUNS);
    local.model.requests.splice(0); // the scripted model keeps every request it got, inputs included
    const parked = await heapAfterGc(gc);
    const perRun = (parked - before) / RUNS;
    console.log(
      `heap with ${RUNS} parked runs of ${INPUT_BYTES / 1024} KiB: +${((parked - before) / 2 ** 20).toFixed(1)} MiB (${(perRun / 1024).toFixed(1)} KiB per run)`,
    );
    expect(perRun).toBeLessThan(PER_RUN_BOUND_BYTES);

    await approveAll(tags);
    expect(await Promise.all(jobs.map(answerOf))).toEqual(
      jobs.map((_, i) => `final p${i}: opened p${i}`),
    );
  }, 240_000);

  it(`keeps under ${MANY_PER_RUN_BOUND_BYTES / 1024} KiB of heap per run with ${MANY_RUNS} runs parked at once, and completes them all once approved`, async () => {
    const gc = collector();
    await parkAndApprove(Array.from({ length: WARM_RUNS }, (_, i) => `w${i}`));
    const completedBefore = await plain.queue.getCompletedCount();
    local.model.requests.splice(0); // those of the runs before, 900 KiB inputs included
    const before = await heapAfterGc(gc);

    const tags = Array.from({ length: MANY_RUNS }, (_, i) => `m${i}`);
    await addSmallRequests(tags);
    await waitUntilIndexed(MANY_RUNS);
    local.model.requests.splice(0);
    const parked = await heapAfterGc(gc);
    const perRun = (parked - before) / MANY_RUNS;
    console.log(
      `heap with ${MANY_RUNS} parked runs: +${((parked - before) / 2 ** 20).toFixed(2)} MiB (${(perRun / 1024).toFixed(2)} KiB per run)`,
    );
    expect(perRun).toBeLessThan(MANY_PER_RUN_BOUND_BYTES);

    await approveAll(tags);
    await waitUntilCompleted(completedBefore + MANY_RUNS);
  }, 300_000);
});
