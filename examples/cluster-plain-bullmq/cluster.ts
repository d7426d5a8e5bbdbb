/**
 * A Yiem cluster in one process: a coordinator (the agent loop and the model calls) and a tool
 * worker, started with `startCoordinator` and `startToolWorker`. They serve the coordinator
 * queue that `client.mjs`, or any BullMQ client, adds jobs to. Ctrl-C (or SIGTERM) closes both.
 *
 *   npx tsx --conditions=yiem-source examples/cluster-plain-bullmq/cluster.ts
 *
 * Reads REDIS_URL (default redis://127.0.0.1:6379), YIEM_PREFIX (yiem), OPENAI_BASE_URL,
 * OPENAI_API_KEY, YIEM_MODEL (gpt-4o-mini) and YIEM_TOOLS_DIR (more tool files). In production
 * these are separate processes: `npm run coordinator` and `npm run worker`, as many as needed.
 */
import { createOpenAILlmCall, startCoordinator, startToolWorker, ToolStore } from "@yiem/core";
import { loadBuiltinAndExtraTools } from "@yiem/tools";

const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = process.env.YIEM_PREFIX ?? "yiem";

/** The built-in tools plus those of YIEM_TOOLS_DIR; a tool file that fails to load is named. */
async function loadTools(name: string): Promise<ToolStore> {
  const store = new ToolStore({ name });
  for (const failure of (await loadBuiltinAndExtraTools(store, process.env.YIEM_TOOLS_DIR))
    .failures) {
    console.error(`tool file skipped: ${failure.path}: ${failure.error}`);
  }
  return store;
}

// The coordinator and the worker each have their tools: a coordinator offers them to the model
// and runs sequential batches itself; the worker runs the calls of parallel batches.
const coordinatorTools = await loadTools("coordinator");
const coordinator = await startCoordinator({
  redis,
  prefix,
  llmCall: createOpenAILlmCall({ model: process.env.YIEM_MODEL ?? "gpt-4o-mini" }),
  toolStore: coordinatorTools,
});
const worker = await startToolWorker({ redis, prefix, toolStore: await loadTools("worker") });
const tools = [...coordinatorTools.tools.keys()].join(", ");
console.log(`cluster ready: queue "coordinator" under "${prefix}:bull"; tools: ${tools}`);

/** Closes the coordinator (its runs finish or are handed over), then the worker; exits 0. */
async function close(): Promise<void> {
  await coordinator.close();
  await worker.close();
  console.log("cluster closed");
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`could not close the cluster: ${String(err)}`);
        process.exit(1);
      },
    );
  });
}
