/**
 * A Restate tool service (`BENCH_TOOLS_SERVICE`: `toolsA` or `toolsB`, one process each) whose
 * handler `step` runs the tool, served on `BENCH_PORT`.
 */
import "./withResolvers.js";
import { runStep } from "../workload.js";

const restate = await import("@restatedev/restate-sdk");
const effects = process.env.BENCH_PEERS_EFFECTS ?? "/dev/null";

/** The tool service: `step({ run, label })` answers "ok". */
export const toolsService = (name: string) =>
  restate.service({
    name,
    handlers: {
      step: async (_ctx: unknown, call: { run: string; label: string }) => runStep(effects, call),
    },
  });

await restate
  .endpoint()
  .bind(toolsService(process.env.BENCH_TOOLS_SERVICE ?? "toolsA"))
  .listen(Number(process.env.BENCH_PORT));
console.log("ready");
