import { setTimeout as sleep } from "node:timers/promises";
import { ResponseTimeoutError, type YiemClient } from "@yiem/core";
import { encodePlan, type PlanMix, randomPlan } from "./plan.js";
import type { Random } from "./random.js";

/** One input the workload sent (its `send` resolved): a request job with id `runId`. */
export interface SentInput {
  runId: string;
  sessionId: string;
  label: string;
  text: string;
  followUp: boolean;
  /** The stop reason of the response the workload received, if it received one in time. */
  answered?: string;
  /** When that response was received (epoch ms). */
  answeredAt?: number;
}

/** What the workload did, for the checker and the report. */
export interface WorkloadRecord {
  sessions: number;
  sent: SentInput[];
  /** Sends that failed (Redis down): their job may or may not exist; the checker looks. */
  failedSends: number;
  aborts: number;
}

/** Options of `startWorkload`. */
export interface WorkloadOptions {
  /** Inputs to send at least (more when `keepGoing` says so). */
  runs: number;
  /** Sessions in flight at once. */
  concurrency: number;
  random: Random;
  mix: PlanMix;
  /** Chance that a session's first run is slow and aborted mid-call. */
  abortChance: number;
  /** While true, sessions keep starting past `runs` (the fault driver still has faults to do). */
  keepGoing: () => boolean;
  /** No new session starts after this (epoch ms). */
  sendUntil: number;
  /** How long one response may take before the workload stops waiting for it. */
  responseTimeoutMs: number;
}

/**
 * The soak's load: `concurrency` sessions at a time, each with a first input, now and then a
 * follow-up sent right behind it (its own run after the first) or a plain input that joins
 * the run in progress, a slow first run aborted mid-call, and a later turn once answered.
 * Every input carries a random plan (`plan.ts`): parallel and sequential tool calls over one
 * to three model turns, a few needing approval. Sends that fail while Redis is down are tried
 * again under a new label. Resolves `done` once no session is left.
 */
export function startWorkload(
  client: YiemClient,
  options: WorkloadOptions,
): { record: WorkloadRecord; done: Promise<void> } {
  const record: WorkloadRecord = { sessions: 0, sent: [], failedSends: 0, aborts: 0 };
  let labels = 0;
  const moreSessions = () =>
    Date.now() < options.sendUntil && (record.sent.length < options.runs || options.keepGoing());

  const send = async (sessionId: string, random: Random, followUp: boolean, slow: boolean) => {
    const plan = randomPlan(random, "", options.mix, slow);
    for (;;) {
      const label = `r${++labels}`;
      const text = encodePlan({ ...plan, label });
      try {
        const { runId } = await client.send(text, { sessionId, followUp });
        const input: SentInput = { runId, sessionId, label, text, followUp };
        record.sent.push(input);
        return input;
      } catch {
        record.failedSends++;
        await sleep(300);
      }
    }
  };

  const awaitAnswer = async (input: SentInput) => {
    const until = Date.now() + options.responseTimeoutMs;
    while (Date.now() < until) {
      try {
        const response = await client.waitForResponse(input.runId, {
          sessionId: input.sessionId,
          timeoutMs: Math.min(20_000, until - Date.now()),
        });
        input.answered = response.stopReason;
        input.answeredAt = Date.now();
        return;
      } catch (err) {
        if (!(err instanceof ResponseTimeoutError)) await sleep(500); // Redis down: wait again
      }
    }
  };

  const abortSoon = async (sessionId: string, random: Random) => {
    await sleep(random.int(300, 1500));
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await client.abort(sessionId);
        record.aborts++;
        return;
      } catch {
        await sleep(300);
      }
    }
  };

  const runSession = async (n: number, random: Random) => {
    const sessionId = `chaos-${n}-${random.int(0, 1e9).toString(36)}`;
    const slow = random.chance(options.abortChance);
    const first = await send(sessionId, random, false, slow);
    const pending = [awaitAnswer(first)];
    if (slow) pending.push(abortSoon(sessionId, random));
    if (random.chance(0.35)) pending.push(send(sessionId, random, true, false).then(awaitAnswer));
    if (random.chance(0.15)) {
      await sleep(random.int(20, 300));
      pending.push(send(sessionId, random, false, false).then(awaitAnswer));
    }
    await Promise.all(pending);
    if (random.chance(0.3)) await awaitAnswer(await send(sessionId, random, false, false));
  };

  // Session n's choices come from the seed and n alone, whichever lane runs it.
  const lane = async () => {
    while (moreSessions()) {
      const n = ++record.sessions;
      await runSession(n, options.random.fork(`session-${n}`));
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, lane)).then(() => undefined);
  return { record, done };
}
