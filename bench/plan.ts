/**
 * Sample counts and time bounds of every measurement. The whole run stays under 10 min; the
 * follow-up burst, on a cluster of its own, takes most of it.
 */
export const PLAN = {
  /** Single no-op calls: remote, raw BullMQ, in-process, in alternating blocks. */
  calls: {
    warmup: { count: 300, maxMs: 5_000 },
    samples: { count: 2_000, maxMs: 25_000 },
    rounds: 50,
  },
  /** Batches of eight parallel calls (and their what-if variants). */
  fanout: {
    warmup: { count: 100, maxMs: 3_000 },
    samples: { count: 500, maxMs: 10_000 },
    rounds: 25,
  },
  /** Partial results relayed from a worker to subscribers here. */
  relay: { warmup: { count: 100, maxMs: 3_000 }, samples: { count: 600, maxMs: 10_000 } },
  /** Traced calls for the phase breakdown. */
  breakdown: {
    warmup: { count: 100, maxMs: 3_000 },
    samples: { count: 600, maxMs: 10_000 },
    rounds: 30,
  },
  /** Sustained load: 64 concurrent loops, per round a warm-up and a measured window. */
  load: { concurrency: 64, warmupMs: 1_000, measureMs: 4_000, maxCalls: 1_000_000 },
  /** Yiem and raw load rounds alternate this many times. */
  loadRounds: 2,
  /**
   * Follow-ups to one session in a burst of 200 and of 2,000 on a real cluster; 20 plain
   * messages to other sessions, one after another, once 200 of the large burst are answered.
   */
  followUpBurst: {
    small: 200,
    large: 2_000,
    idleMessages: 20,
    probes: 20,
    probesAfter: 200,
    maxBurstMs: 240_000,
    maxMessageMs: 30_000,
  },
} as const;

/** The shape of `PLAN`. */
export type Plan = typeof PLAN;
