import { appendFileSync } from "node:fs";
import type { AgentTool } from "@yiem/core";

/**
 * Test tool `waitForAbort`: runs until its signal fires, then writes `aborted <label>` to the
 * file in `YIEM_TEST_LEDGER` (when set) so a test can see that the abort reached the worker.
 */
export function getTool(): AgentTool {
  return {
    name: "waitForAbort",
    label: "Wait For Abort",
    description: "Runs until aborted",
    inputSchema: { type: "object", properties: { label: { type: "string" } }, required: ["label"] },
    parallelToolExecute: true,
    execute: (_id, args, _signal, onPartialResult) =>
      new Promise((_resolve, reject) => {
        onPartialResult({ waiting: true });
        _signal?.addEventListener("abort", () => {
          const ledger = process.env.YIEM_TEST_LEDGER;
          if (ledger) appendFileSync(ledger, `aborted ${String(args.label)} ${process.pid}\n`);
          reject(new Error("stopped by abort"));
        });
      }),
  };
}
