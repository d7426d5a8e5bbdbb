/**
 * When a coordinator's HTTP side (express, Bull Board's mount, the front door thread) starts:
 * after the first run when a run was waiting as the coordinator started (a replacement for a
 * dead one), at once when none was. The ready line comes once the HTTP side is up.
 */
import { logMessage, type TestProcess } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  openPlainCoordinatorQueue,
  type PlainCoordinatorQueue,
} from "../support/openPlainCoordinatorQueue.js";

/** Every model call answers after 400 ms: a first run that lasts. */
const cluster = useTestCluster({
  coordinators: 0,
  workers: 0,
  model: { respond: () => ({ kind: "text", text: "done", delayMs: 400 }) },
});

let plain: PlainCoordinatorQueue;

beforeAll(async () => {
  plain = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
});

afterAll(async () => {
  await plain?.close();
});

/** Where in `process`'s log the first line of `message` is (-1: none). */
function lineOf(process: TestProcess, message: string): number {
  const matches = logMessage(message);
  return process.lines.findIndex((line) => matches(line));
}

describe("a coordinator's HTTP side at start", () => {
  it("starts after the first run when a run was waiting, and answers /healthz then", async () => {
    const job = await plain.queue.add("session", { input: "waiting before the start" });
    const coordinator = await cluster.addCoordinator();
    const finished = lineOf(coordinator, "run finished");
    expect(finished).toBeGreaterThanOrEqual(0);
    expect(lineOf(coordinator, "coordinator ready")).toBeGreaterThan(finished);
    expect(await job.waitUntilFinished(plain.events, 10_000)).toMatchObject({
      response: { content: [{ text: "done" }] },
    });
    const url = cluster.coordinatorUrls.at(-1) ?? "";
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("starts at once when nothing was waiting", async () => {
    const coordinator = await cluster.addCoordinator();
    expect(lineOf(coordinator, "coordinator ready")).toBeGreaterThanOrEqual(0);
    expect(lineOf(coordinator, "run finished")).toBe(-1);
  });
});
