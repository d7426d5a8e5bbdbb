// The chaos tools' shared body, in plain JavaScript so the compiled processes (`node
// apps/…/dist/main.bundle.js`, no tsx) load the tool files in ./tools that use it.
import { appendFileSync } from "node:fs";

/**
 * Runs one chaos call: appends `<label> <tool> <pid> <process>` to the ledger file named by
 * `YIEM_CHAOS_LEDGER` (a side effect outside Redis, counted by the checker), waits `ms`
 * (honouring the abort signal), and answers `<label> ok`.
 *
 * @param {string} tool the tool's name, written to the ledger
 * @returns {import("@yiem/core").ToolExecuteFn}
 */
function recordExecution(tool) {
  return async (_toolCallId, args, signal) => {
    const ledger = process.env.YIEM_CHAOS_LEDGER;
    const where = process.env.YIEM_WORKER_ID ?? "coordinator";
    if (ledger) appendFileSync(ledger, `${String(args.label)} ${tool} ${process.pid} ${where}\n`);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, Number(args.ms ?? 0));
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error(`${tool} aborted`));
      });
    });
    return { content: [{ type: "text", text: `${String(args.label)} ok` }], details: {} };
  };
}

/**
 * A chaos tool named `name` with `overrides` (where it runs, retries, approval).
 *
 * @param {string} name
 * @param {Partial<import("@yiem/core").AgentTool>} overrides
 * @returns {import("@yiem/core").AgentTool}
 */
export function chaosTool(name, overrides) {
  return {
    name,
    label: name,
    description: "Records its execution in the chaos ledger, then waits",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" }, ms: { type: "integer", minimum: 0 } },
      required: ["label"],
    },
    execute: recordExecution(name),
    ...overrides,
  };
}
