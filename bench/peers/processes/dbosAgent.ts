/**
 * The DBOS agent process: the agent workflow (each model call a step, the two tool calls as
 * `step` workflows on the `tools` queue served by other processes), and an HTTP face on
 * `BENCH_PORT`: `POST /run/<run>` starts the workflow with the run's key as its id (or joins
 * it, after a restart) and answers with its result.
 */
import { createServer } from "node:http";
import { DBOS } from "@dbos-inc/dbos-sdk";
import { agentWorkflow, configureDbos, POLL_MS, registerToolsQueue } from "./dbosConfig.js";

configureDbos("agent", ["agent-http-only"]);
await DBOS.launch();
await registerToolsQueue();

const server = createServer((req, res) => {
  const run = decodeURIComponent((req.url ?? "").replace(/^\/run\//, ""));
  DBOS.startWorkflow(agentWorkflow, { workflowID: run })(run)
    .then((handle) => handle.getResult({ pollingIntervalMs: POLL_MS }))
    .then(
      (answer) => res.end(JSON.stringify(answer)),
      (err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      },
    );
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BENCH_PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", async () => {
  server.close();
  await DBOS.shutdown();
  process.exit(0);
});
