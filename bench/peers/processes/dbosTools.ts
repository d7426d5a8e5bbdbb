/** A DBOS tool process: dequeues `step` workflows from the `tools` queue. */
import { DBOS } from "@dbos-inc/dbos-sdk";
import { configureDbos, registerToolsQueue } from "./dbosConfig.js";

configureDbos(process.env.BENCH_EXECUTOR_ID ?? "tools", ["tools"]);
await DBOS.launch();
await registerToolsQueue();
console.log("ready");
process.on("SIGTERM", async () => {
  await DBOS.shutdown();
  process.exit(0);
});
