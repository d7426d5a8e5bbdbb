import { appendFileSync } from "node:fs";
import type { AgentTool, ToolExecuteFn } from "@yiem/core";

/**
 * Fault-test tools that count their side effects: each execution appends
 * `<tool> <label> <pid>` to the file named by `YIEM_TEST_LEDGER`, reports a first partial
 * result (so a test learns which worker runs it), then waits `ms` before answering.
 */
const runLedgerCall: ToolExecuteFn = async (toolCallId, args, signal, onPartialResult) => {
  const ledger = process.env.YIEM_TEST_LEDGER;
  if (ledger) appendFileSync(ledger, `${toolCallId} ${String(args.label)} ${process.pid}\n`);
  onPartialResult({ pid: process.pid });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, Number(args.ms ?? 0));
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("ledger call aborted"));
    });
  });
  return {
    content: [{ type: "text", text: `${String(args.label)} recorded` }],
    details: { pid: process.pid },
  };
};

function ledgerTool(name: string, overrides: Partial<AgentTool>): AgentTool {
  return {
    name,
    label: name,
    description: "Records its execution in the test ledger, then waits",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" }, ms: { type: "integer" } },
      required: ["label"],
    },
    execute: runLedgerCall,
    ...overrides,
  };
}

/** `ledgerRemote`: a remote ledger call, retried once when its worker dies. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerRemote", { parallelToolExecute: true, retries: 1 });
}

export { ledgerTool };
