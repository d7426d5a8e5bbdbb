/**
 * Sample counts and time bounds of every measurement. The whole run stays under 10 min (about
 * three on an idle two-core machine); the follow-up burst, the sessions and the Redis Cluster
 * runs, each on a cluster of its own, take more than half. `sessions10k` runs only alone.
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
  /**
   * A child run against a plain remote call: runs one at a time on one compiled coordinator,
   * in alternating blocks (`--only childRuns`, and in the full run).
   */
  childRuns: { warmupRuns: 30, rounds: 4, runsPerBlock: 100, maxRunMs: 20_000 },
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
   * 2,000 sessions at once on compiled coordinators (one request each: two parallel tool
   * calls, then the answer; the model answers after 200 ms): one `addBulk` at concurrency
   * 2,000 and at the default, separate `YiemClient.send` calls from a client process (tools
   * reporting progress), one `addBulk` on two coordinators; 2 rounds of 500 unnamed and 500
   * named-agent runs; then the raw anchors: the openai SDK alone and plain BullMQ
   * add/complete pairs.
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
    agentBlocks: { rounds: 2, sessions: 500 },
    sdkAnchor: { warmup: 500, count: 2_000, inFlight: 64 },
    bullmqAnchor: { warmup: 3_000, count: 8_000, inFlight: 64 },
    bullmqWorkers: 2,
  },
  /**
   * Opt-in (`--only sessions10k`): 10,000 sessions at once on one compiled coordinator of
   * concurrency 10,000, then 10,000 runs parked for approval on a fresh one.
   */
  sessions10k: {
    sessions: 10_000,
    parked: 10_000,
    workers: 2,
    modelDelayMs: 200,
    warmupSessions: 200,
    rssIntervalMs: 200,
    probeIntervalMs: 50,
    maxLoadMs: 400_000,
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
  /**
   * `--only gatewayReaders` (not in the full run): 500 stalled and 500 live event-stream
   * readers on one gateway with a keys file (10 of each on each of 50 sessions) while 25 of
   * the sessions get a run answering 1 MiB; the gateway's peak RSS and another key's requests.
   */
  gatewayReaders: {
    cluster: {
      modelDelayMs: 20,
      workers: 1,
      coordinatorConcurrency: 256,
      gatewayMaxConnections: 4_096,
    },
    sessions: 50,
    stalledPerSession: 10,
    livePerSession: 10,
    largeRuns: 25,
    answerChars: 1024 * 1024,
    inFlight: 50,
    rssIntervalMs: 100,
    maxMs: 120_000,
  },
  /**
   * `--only flow` (not in the full run; issue 33): 500 sessions of tool-calling runs at once on
   * two coordinators sharing one provider limit, against a model server limited to `tokens`
   * and `requests` per `windowMs` (10 s instead of a provider's minute, so the run takes one
   * to two minutes); `YIEM_MODEL_LIMITS` says the same, with `outputTokens` reserved per call.
   */
  flow: {
    sessions: 500,
    coordinators: 2,
    workers: 2,
    concurrency: 500,
    modelDelayMs: 20,
    windowMs: 10_000,
    tokens: 60_000,
    requests: 200,
    outputTokens: 20,
    maxMs: 300_000,
    /** The flood of one tenant behind which another's runs are timed. */
    floodRuns: 5000,
    /** The capped tenant's model calls a day, and the runs it sends at once (two calls each). */
    budgetCalls: 50,
    budgetRuns: 40,
  },
} as const;

/** `T` with every number literal widened to `number` (so a smaller plan has the same shape). */
type Widened<T> = T extends number
  ? number
  : T extends object
    ? { -readonly [K in keyof T]: Widened<T[K]> }
    : T;

/** The shape of `PLAN`. */
export type Plan = Widened<typeof PLAN>;

/** The plan of the `flow` scenario. */
export type FlowPlan = Plan["flow"];

/**
 * A much smaller plan for `--quick`: every scenario of the full run at a fraction of its sizes,
 * to check that the run works end to end (on a busy machine too) in a minute or two. Its
 * figures are not comparable with a full run's; `--quick` writes its files elsewhere.
 */
export const QUICK_PLAN: Plan = {
  ...PLAN,
  calls: { warmup: { count: 50, maxMs: 2_000 }, samples: { count: 300, maxMs: 5_000 }, rounds: 10 },
  mcp: { warmup: { count: 20, maxMs: 2_000 }, samples: { count: 100, maxMs: 3_000 }, rounds: 4 },
  childRuns: { ...PLAN.childRuns, warmupRuns: 5, rounds: 2, runsPerBlock: 20 },
  fanout: { warmup: { count: 20, maxMs: 2_000 }, samples: { count: 100, maxMs: 3_000 }, rounds: 5 },
  relay: { warmup: { count: 20, maxMs: 2_000 }, samples: { count: 100, maxMs: 3_000 } },
  breakdown: {
    warmup: { count: 20, maxMs: 2_000 },
    samples: { count: 100, maxMs: 3_000 },
    rounds: 5,
  },
  load: { ...PLAN.load, warmupMs: 300, measureMs: 1_000 },
  loadRounds: 1,
  followUpBurst: {
    ...PLAN.followUpBurst,
    small: 50,
    large: 200,
    idleMessages: 5,
    probes: 5,
    probesAfter: 50,
  },
  sessions: {
    ...PLAN.sessions,
    sessions: 300,
    concurrency: 300,
    warmupSessions: 20,
    agentBlocks: { rounds: 1, sessions: 100 },
    sdkAnchor: { warmup: 100, count: 300, inFlight: 64 },
    bullmqAnchor: { warmup: 300, count: 1_000, inFlight: 64 },
  },
  sessions10k: { ...PLAN.sessions10k, sessions: 1_000, parked: 1_000, warmupSessions: 50 },
  gateway: { ...PLAN.gateway, streams: { ...PLAN.gateway.streams, watchers: 100, idleMs: 1_000 } },
  gatewayReaders: { ...PLAN.gatewayReaders, sessions: 10, largeRuns: 5 },
  flow: {
    ...PLAN.flow,
    sessions: 50,
    tokens: 6_000,
    requests: 40,
    windowMs: 5_000,
    floodRuns: 300,
    budgetCalls: 10,
    budgetRuns: 8,
  },
  cluster: { ...PLAN.cluster, warmupRuns: 10, rounds: 1, runsPerRound: 30, soloRunsPerRound: 5 },
};
