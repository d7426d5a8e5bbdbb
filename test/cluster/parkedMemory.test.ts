/**
 * A run parked for approval holds nothing on its coordinator: not the request job's input,
 * however large, nor anything else that grows with it. Measured on a coordinator running in
 * this process: 200 requests of 900 KiB each, all parked at once, add to its heap no more than
 * a small record each; once approved, every request job completes with its answer.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { AgentTool } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

const RUNS = 200;
const INPUT_BYTES = 900 * 1024;
/** What one parked run may keep on its coordinator: a small record, far below its input. */
const PER_RUN_BOUND_BYTES = 32 * 1024;

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

/** The heap in use after full collections. */
async function heapAfterGc(gc: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const local = useInProcessCoordinator({
  respond,
  tools: [gate],
  storeName: "parked-memory",
  privateRedis: true,
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

/** Waits for request job `jobId` to finish and returns its answer's text. */
async function answerOf(jobId: string): Promise<string> {
  const job = await Job.fromId(plain.queue, jobId);
  if (!job) throw new Error(`request job ${jobId} is gone`);
  const result = await job.waitUntilFinished(plain.events, 60_000);
  return result.response.content[0].text;
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

    const jobs: string[] = [];
    for (let i = 0; i < RUNS; i++) jobs.push(await addRequest(`p${i}`));
    await waitUntilParked(RUNS);
    local.model.requests.splice(0); // the scripted model keeps every request it got, inputs included
    const parked = await heapAfterGc(gc);
    const perRun = (parked - before) / RUNS;
    console.log(
      `heap with ${RUNS} parked runs of ${INPUT_BYTES / 1024} KiB: +${((parked - before) / 2 ** 20).toFixed(1)} MiB (${(perRun / 1024).toFixed(1)} KiB per run)`,
    );
    expect(perRun).toBeLessThan(PER_RUN_BOUND_BYTES);

    for (let i = 0; i < RUNS; i++) await local.client.approve(`parked-p${i}`, `p${i}-1`);
    expect(await Promise.all(jobs.map(answerOf))).toEqual(
      jobs.map((_, i) => `final p${i}: opened p${i}`),
    );
  }, 240_000);
});
