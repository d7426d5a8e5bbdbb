/**
 * What the DBOS processes share, as DBOS has every process of an application register the same
 * workflows: the configuration (one application version for every process), the `step` and
 * `agent` workflows, and the queues' 50 ms polls. Which process runs what is up to the queues:
 * tool processes dequeue from `tools`; a workflow recovered after its process died is put on
 * DBOS's internal queue, which every process dequeues from.
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import { callModel, openModel, runAgent, runStep } from "../workload.js";

/** How often queues and results are polled (DBOS's default is 1 s). */
export const POLL_MS = 50;

/** Configures DBOS for this process: its executor id and the queues it dequeues from. */
export function configureDbos(executorID: string, listenQueues: string[]): void {
  DBOS.setConfig({
    name: "yiem-bench-peers",
    systemDatabaseUrl: process.env.BENCH_DBOS_URL ?? "",
    applicationVersion: "bench",
    executorID,
    listenQueues,
    systemDatabasePoolSize: 10,
  });
}

/** The `step` tool as a workflow of its own, run from the `tools` queue. */
export const stepWorkflow = DBOS.registerWorkflow(
  async (call: { run: string; label: string }) =>
    runStep(process.env.BENCH_PEERS_EFFECTS ?? "/dev/null", call),
  { name: "step" },
);

/** Registers the `tools` queue (idempotent) with 50 ms polls; after `DBOS.launch()`. */
export async function registerToolsQueue(): Promise<void> {
  await DBOS.registerQueue("tools", { minPollingIntervalMs: POLL_MS, onConflict: "always_update" });
}

const model = openModel(process.env.BENCH_MODEL_URL ?? "");

/**
 * The agent loop as a workflow: each model call a step, the two tool calls `step` workflows on
 * the `tools` queue, started in a fixed order and awaited together.
 */
export const agentWorkflow = DBOS.registerWorkflow(
  async (run: string) =>
    runAgent(run, {
      model: (messages) => DBOS.runStep(() => callModel(model, messages), { name: "model" }),
      tools: async (calls) => {
        const handles = await Promise.all(
          calls.map((call) => DBOS.startWorkflow(stepWorkflow, { queueName: "tools" })(call)),
        );
        return Promise.all(handles.map((h) => h.getResult({ pollingIntervalMs: POLL_MS })));
      },
    }),
  { name: "agent" },
);
