import type { Plan } from "../plan.js";
import { WORKER_CONCURRENCY } from "../setup/rawBullmq.js";

/**
 * How a full run measured, in words and numbers, as `bench/results.json` keeps it
 * (`details.method`): which process runs what, and how each scenario is set up.
 */
export function describeMethod(plan: Plan): Record<string, string | number> {
  return {
    coordinatorSide: "this process (the bench): queues, ResultWaiter, events, transcript",
    workers: "child processes (node + tsx, as the apps run): startToolWorker / plain BullMQ Worker",
    workerConcurrency: WORKER_CONCURRENCY,
    latencyWorkers: 1,
    throughputWorkers: 2,
    throughputConcurrency: plan.load.concurrency,
    throughputWindowS: (plan.load.measureMs * plan.loadRounds) / 1000,
    events:
      "createEventPublisher(command, keys, origin).emit: publishEvent sent in order on the command connection, reply not awaited",
    persistence:
      "SessionStore.appendMany under a held lease: one fenced Lua script per batch of result messages, sent without waiting for its reply (PipelinedTranscript.appendBehind; the session's next write, guarded, waits for it)",
    rawWait: "job.waitUntilFinished(queueEvents, 10000)",
    followUpBurst:
      "startTestCluster: one coordinator and one tool worker process (node + tsx), a private redis-server, a scripted model answering at once; requests added with plain BullMQ, answers seen through QueueEvents 'completed'",
    sessions:
      "compiled processes as deployed (node apps/…/dist/main.js): fresh coordinators per load (addBulk at concurrency 2,000 and at the default; separate YiemClient.send calls from a client process, tools reporting progress; addBulk on two coordinators; named against unnamed agent runs in alternating blocks), two tool workers, a private redis-server, a scripted model answering after 200 ms; CPU from /proc/<pid>/stat around the load, RSS sampled from /proc/<pid>/status, /healthz probed from a process of its own, INFO stats and INFO commandstats before and after; raw parts: 2 openai SDK calls + 2 plain BullMQ producer sides",
    mcp: "server-everything's echo over stdio: the MCP SDK's Client directly, as a Yiem tool in process (executeToolCalls), as a remote call to a Yiem worker with YIEM_MCP_CONFIG; alternating blocks",
    childRuns:
      "compiled processes as deployed: one coordinator with a YIEM_AGENTS file (plain: one remote noopStep call; parent: one agent__child call; child: answers at once), one tool worker, a private redis-server, a scripted model answering at once; runs one at a time with plain BullMQ queue.add + waitUntilFinished, in blocks alternating between the two kinds; CPU from /proc/<pid>/stat around each block",
    cluster:
      "two startTestCluster({ redisCluster: true }), YIEM_REPLICA_ACKS 0 and 1: a 3+3 Redis Cluster each, one coordinator and two tool worker processes (node + tsx), a scripted model answering at once; runs sent with YiemClient.send + waitForResponse in blocks alternating between the two; data commands per master from INFO commandstats after CONFIG RESETSTAT",
  };
}
