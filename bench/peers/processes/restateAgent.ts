/**
 * The Restate agent service, served on `BENCH_PORT`: `agent/run` runs the agent loop with each
 * model call journaled (`ctx.run`) and the two tool calls as calls of the tool services
 * `toolsA` and `toolsB` (one process each), awaited together.
 */
import "./withResolvers.js";
import { callModel, openModel, runAgent } from "../workload.js";

const restate = await import("@restatedev/restate-sdk");
const model = openModel(process.env.BENCH_MODEL_URL ?? "");
const TOOL_SERVICES = ["toolsA", "toolsB"];

const agent = restate.service({
  name: "agent",
  handlers: {
    run: async (ctx: import("@restatedev/restate-sdk").Context, run: string) =>
      runAgent(run, {
        model: (messages) => ctx.run("model", () => callModel(model, messages)),
        tools: (calls) =>
          restate.RestatePromise.all(
            calls.map((call, i) =>
              ctx.genericCall({
                service: TOOL_SERVICES[i % TOOL_SERVICES.length] ?? "toolsA",
                method: "step",
                parameter: call,
                inputSerde: restate.serde.json,
                outputSerde: restate.serde.json,
              }),
            ),
          ) as Promise<string[]>,
      }),
  },
});

await restate.endpoint().bind(agent).listen(Number(process.env.BENCH_PORT));
console.log("ready");
