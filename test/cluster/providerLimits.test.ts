/**
 * Provider limits shared by every coordinator (issue 33, item 1): two coordinator processes
 * calling a model server that limits its requests as a provider does (the scripted model's
 * limiter, a sliding window) stay under it together, and a 429 one of them receives pauses
 * the other's calls to that model too. Real processes, a private Redis.
 */
import {
  logEntries,
  type ScriptedReply,
  type ScriptedRequest,
  sampleOf,
  scrape,
} from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** The model server's limit: 4 requests in any 800 ms. */
const PROVIDER = { requests: 4, windowMs: 800 };

/** The coordinators' shared limit: 4 requests a second (a little under the provider's). */
const LIMITS = { "scripted-model": { requests: 4, windowMs: 1000 } };

/** Seconds the model's one 429 asks to wait. */
const RETRY_AFTER_S = 2;

/** What a coordinator logs when a 429 pauses the calls under a limit. */
const PAUSED_LOG = "model server answered 429: every coordinator's calls under this limit pause";

let refusedOnce = false;

/** Echoes the input; `refuse` is answered 429 once, with a `retry-after`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  if (input === "refuse" && !refusedOnce) {
    refusedOnce = true;
    const message = "rate limit reached";
    return { kind: "httpError", status: 429, message, retryAfterSeconds: RETRY_AFTER_S };
  }
  return { kind: "text", text: `echo ${input}` };
}

const cluster = useTestCluster({
  coordinators: 2,
  workers: 0,
  model: { respond, limits: PROVIDER },
  // Three sessions at once each (runs waiting for their turn lend their slots).
  coordinatorEnv: { YIEM_MODEL_LIMITS: JSON.stringify(LIMITS), YIEM_COORDINATOR_CONCURRENCY: "3" },
});

/** Sends `inputs` as runs of their own sessions at once and waits for every answer's text. */
async function answersTo(inputs: string[]): Promise<string[]> {
  const runs = await Promise.all(inputs.map((input) => cluster.client.send(input)));
  const answers = await Promise.all(
    runs.map(({ runId }) => cluster.client.waitForAnswer(runId, { timeoutMs: 30_000 })),
  );
  return answers.map(({ response }) => {
    const [part] = response.content;
    return part?.type === "text" ? part.text : `${response.stopReason} ${response.errorMessage}`;
  });
}

/** The model calls each coordinator made, from its /metrics. */
async function callsByCoordinator(): Promise<number[]> {
  const series = 'yiem_model_calls_total{agent="default",model="scripted-model"}';
  const scrapes = await Promise.all(cluster.coordinatorUrls.map((url) => scrape(`${url}/metrics`)));
  return scrapes.map((text) => sampleOf(text, series) ?? 0);
}

describe("provider limits shared by two coordinators", () => {
  it("keeps both under the provider's request limit: no 429, no run failed", async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => `run ${i}`);
    expect(await answersTo(inputs)).toEqual(inputs.map((input) => `echo ${input}`));
    expect(cluster.model.limited).toEqual([]);
    expect(cluster.model.requests).toHaveLength(12);
    const calls = await callsByCoordinator();
    expect(calls.reduce((sum, n) => sum + n, 0)).toBe(12);
    expect(calls.every((n) => n > 0)).toBe(true); // both coordinators called the model
  });

  it("pauses every coordinator's calls to the model after a 429 with Retry-After", async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the first test's window passes
    const refused = cluster.client.send("refuse");
    const paused = () => cluster.coordinators.flatMap((c) => logEntries(c, PAUSED_LOG)).length > 0;
    await expect.poll(paused, { timeout: 10_000 }).toBe(true);
    const first = cluster.model.requests.length;
    const inputs = Array.from({ length: 6 }, (_, i) => `after ${i}`);
    const answers = await answersTo(inputs);
    const { runId } = await refused;
    const { response } = await cluster.client.waitForAnswer(runId, { timeoutMs: 30_000 });
    expect(answers).toEqual(inputs.map((input) => `echo ${input}`));
    expect(response.content).toEqual([{ type: "text", text: "echo refuse" }]);
    const refusal = cluster.model.requests[first - 1] as ScriptedRequest;
    const pauseEnd = refusal.receivedAt + RETRY_AFTER_S * 1000;
    const later = cluster.model.requests.slice(first).map((request) => request.receivedAt);
    expect(later).toHaveLength(7); // six runs and the refused one's retry
    expect(later.filter((at) => at < pauseEnd - 5)).toEqual([]); // none before the pause ended
  });
});
