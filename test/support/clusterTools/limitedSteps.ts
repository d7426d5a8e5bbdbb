import { appendFileSync } from "node:fs";
import type { AgentTool, ToolExecuteFn } from "@yiem/core";

/**
 * Tools with cluster-wide limits, for the limits tests. Each call appends
 * `start <callId> <ms>` and `end <callId> <ms>` to the file named by `YIEM_TEST_TIMELINE`,
 * waits `ms` in between, and answers with its label.
 */
const runTimedStep: ToolExecuteFn = async (toolCallId, args) => {
  const timeline = process.env.YIEM_TEST_TIMELINE;
  if (timeline) appendFileSync(timeline, `start ${toolCallId} ${Date.now()}\n`);
  await new Promise((resolve) => setTimeout(resolve, Number(args.ms ?? 0)));
  if (timeline) appendFileSync(timeline, `end ${toolCallId} ${Date.now()}\n`);
  return { content: [{ type: "text", text: `${String(args.label)} done` }], details: {} };
};

function timedStep(name: string, limits: Pick<AgentTool, "concurrency" | "rateLimit">): AgentTool {
  return {
    name,
    label: name,
    description: "Waits, recording when it started and ended",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" }, ms: { type: "integer" } },
      required: ["label"],
    },
    parallelToolExecute: true,
    execute: runTimedStep,
    ...limits,
  };
}

/** `limitedStep`: at most 3 calls at once across the cluster. */
export function getTool(): AgentTool {
  return timedStep("limitedStep", { concurrency: 3 });
}

/** `ratedStep`: at most 5 calls started per second across the cluster. */
export function getRatedTool(): AgentTool {
  return timedStep("ratedStep", { rateLimit: { max: 5, durationMs: 1000 } });
}
