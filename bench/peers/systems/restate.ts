/**
 * Restate: its server from npm (`@restatedev/restate-server`, single node, its defaults: the
 * log's RocksDB WAL fsynced), the agent service and the two tool services as processes of
 * their own, registered with the server's admin API. Runs arrive on the ingress as
 * request-response calls of `agent/run` with the run's key as idempotency key.
 */
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort } from "@yiem/testing";
import type { PeerContext, PeerSystem } from "./peerSystem.js";
import { sleep } from "./peerSystem.js";
import { firstOf, startPeerProcess } from "./processes.js";

const require = createRequire(import.meta.url);

/** The server binary the npm package installs for this platform. */
function serverBinary(): string {
  const pkg = require.resolve("@restatedev/restate-server-linux-x64/package.json");
  return join(dirname(pkg), "bin", "restate-server");
}

/** Polls `url` until it answers 2xx. */
async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} not healthy within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Registers the deployment at `uri` with the admin API. */
async function register(adminURL: string, uri: string): Promise<void> {
  const response = await fetch(`${adminURL}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri, force: true }),
  });
  if (!response.ok)
    throw new Error(`registering ${uri}: ${response.status} ${await response.text()}`);
}

/** Starts Restate. */
export async function startRestate(ctx: PeerContext): Promise<PeerSystem> {
  const [ingress, admin, node, agentPort, toolsA, toolsB] = await Promise.all(
    Array.from({ length: 6 }, () => freePort()),
  );
  const log = openSync(join(ctx.dataDir, "restate-server.log"), "a");
  const server = spawn(serverBinary(), ["--base-dir", join(ctx.dataDir, "restate"), "--no-logo"], {
    env: {
      ...process.env,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
      RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}`,
      RESTATE_LOG_FILTER: "warn",
    },
    stdio: ["ignore", log, log],
  });
  const adminURL = `http://127.0.0.1:${admin}`;
  await waitHealthy(`${adminURL}/health`, 60_000);
  const env = { BENCH_MODEL_URL: ctx.modelURL, BENCH_PEERS_EFFECTS: ctx.effectsFile };
  const tools = await Promise.all([
    startPeerProcess("restateTools", {
      ...env,
      BENCH_TOOLS_SERVICE: "toolsA",
      BENCH_PORT: String(toolsA),
    }),
    startPeerProcess("restateTools", {
      ...env,
      BENCH_TOOLS_SERVICE: "toolsB",
      BENCH_PORT: String(toolsB),
    }),
  ]);
  const agent = await startPeerProcess("restateAgent", { ...env, BENCH_PORT: String(agentPort) });
  for (const port of [toolsA, toolsB, agentPort])
    await register(adminURL, `http://127.0.0.1:${port}`);
  await waitHealthy(`http://127.0.0.1:${ingress}/restate/health`, 30_000);
  return {
    name: "Restate",
    async run(run) {
      const response = await fetch(`http://127.0.0.1:${ingress}/agent/run`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": run },
        body: JSON.stringify(run),
      });
      if (!response.ok) throw new Error(`agent/run: ${response.status} ${await response.text()}`);
      return String(await response.json());
    },
    pids: async () => [server.pid ?? -1, agent.current().pid, ...tools.map((t) => t.current().pid)],
    killOrchestrator: () => agent.kill(),
    killToolWorker: () => firstOf(tools).kill(),
    async close() {
      await Promise.all([agent, ...tools].map((p) => p.stop()));
      server.kill("SIGTERM");
      await new Promise((resolve) => server.once("exit", resolve));
    },
  };
}
