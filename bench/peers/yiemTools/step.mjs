// The peers bench's `step` tool for Yiem's compiled workers (plain JavaScript, loaded through
// YIEM_TOOLS_DIR): appends `<run>:<label>` to the side-effects file BENCH_PEERS_EFFECTS names,
// as the peers' tools do (bench/peers/workload.ts `runStep`), and answers "ok". One retry
// (`retries: 1`): a call whose worker died runs again on another, as the peers' tools do. In a
// run of the tool-worker kill test it works 300 ms before its side effect, as `runStep` does.
import { appendFileSync } from "node:fs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  const file = process.env.BENCH_PEERS_EFFECTS ?? "/dev/null";
  return {
    name: "step",
    label: "Step",
    description: "Records one step of a run",
    inputSchema: {
      type: "object",
      properties: { run: { type: "string" }, label: { type: "string" } },
      required: ["run", "label"],
    },
    parallelToolExecute: true,
    retries: 1,
    execute: async (_toolCallId, args) => {
      // As workload.ts SLOW_STEP_MARK / SLOW_STEP_MS: a run of the tool-worker kill test works first.
      if (String(args.run).includes("-worker-kill-")) await new Promise((r) => setTimeout(r, 300));
      appendFileSync(file, `${args.run}:${args.label}\n`);
      return { content: [{ type: "text", text: "ok" }], details: {} };
    },
  };
}
