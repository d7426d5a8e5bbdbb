/**
 * Sample counts and time bounds of every measurement. The whole run stays under 10 min (about
 * two); the follow-up burst, the sessions and the Redis Cluster runs, each on a cluster of its
 * own, take about half.
 */
export const PLAN = {
  /** Single no-op calls: remote, raw BullMQ, in-process, in alternating blocks. */
  calls: {
    warmup: { count: 300, maxMs: 5_000 },
    samples: { count: 2_000, maxMs: 25_000 },
    rounds: 50,
  },
  /**
   * One `echo` call of the reference MCP server over stdio: through the SDK directly and as a
   * Yiem tool in the in-process lifecycle, in alternating blocks.
   */
  mcp: {
    warmup: { count: 100, maxMs: 3_000 },
    samples: { count: 600, maxMs: 10_000 },
    rounds: 10,
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
  /**
   * 2,000 sessions at once on one compiled coordinator (one request each: two parallel tool
   * calls, then the answer; the model answers after 200 ms), at concurrency 2,000 and at the
   * default; then the raw anchors: the openai SDK alone and plain BullMQ add/complete pairs.
   */
  sessions: {
    sessions: 2_000,
    concurrency: 2_000,
    workers: 2,
    modelDelayMs: 200,
    warmupSessions: 100,
    rssIntervalMs: 100,
    probeIntervalMs: 50,
    maxLoadMs: 180_000,
    sdkAnchor: { warmup: 500, count: 2_000, inFlight: 64 },
    bullmqAnchor: { warmup: 3_000, count: 8_000, inFlight: 64 },
    bullmqWorkers: 2,
  },
  /**
   * Runs on two 3+3 Redis Clusters (one coordinator, two tool workers each), one with
   * `YIEM_REPLICA_ACKS=0` and one with 1: after a warm-up, 4 rounds of 100 runs on each in
   * turn, 32 in flight, each block followed by 20 runs one at a time (every run to a fresh
   * session); a run is two parallel no-op tool calls, then the answer.
   */
  cluster: {
    warmupRuns: 40,
    rounds: 4,
    runsPerRound: 100,
    inFlight: 32,
    soloRunsPerRound: 20,
    workers: 2,
    maxRunMs: 20_000,
  },
  /**
   * `--only gateway` (not in the full run): 1,000 event-stream watchers on one compiled gateway
   * while each of their sessions gets one run (100 a second), then runs/s through
   * `POST /v1/runs?wait=true` against plain BullMQ, 32 in flight, in alternating blocks.
   */
  gateway: {
    cluster: {
      modelDelayMs: 20,
      workers: 1,
      coordinatorConcurrency: 256,
      gatewayMaxConnections: 4_096,
    },
    streams: {
      watchers: 1_000,
      connectInFlight: 100,
      runsPerS: 100,
      rssIntervalMs: 100,
      idleMs: 3_000,
      maxMs: 120_000,
    },
    runs: { inFlight: 32, warmupMs: 2_000, blockMs: 4_000, rounds: 2, maxRunMs: 30_000 },
  },
} as const;

/** The shape of `PLAN`. */
export type Plan = typeof PLAN;
