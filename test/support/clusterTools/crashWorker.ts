import { appendFileSync } from "node:fs";
import type { AgentTool } from "@yiem/core";

/** `crashWorker`: kills the process that runs it, every time (retries: 1). */
export function getTool(): AgentTool {
  return {
    name: "crashWorker",
    label: "Crash Worker",
    description: "Kills its own worker",
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: true,
    retries: 1,
    execute: (toolCallId) => {
      const ledger = process.env.YIEM_TEST_LEDGER;
      if (ledger) appendFileSync(ledger, `${toolCallId} crash ${process.pid}\n`);
      process.kill(process.pid, "SIGKILL");
      return new Promise(() => {});
    },
  };
}
