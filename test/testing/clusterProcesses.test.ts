/**
 * `startClusterProcesses` and `startProcessSlot` of `@yiem/testing` as tests, bench and the
 * chaos soak use them: compiled processes as deployed, slots killed and restarted in place,
 * one more process added, logs moved to files, a clean close. Needs `npm run build` (npm test
 * runs it first).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ClusterProcesses,
  freePort,
  type ScriptedModelServer,
  startClusterProcesses,
  startProcessSlot,
  startScriptedModelServer,
  startTestRedis,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterToolsDir } from "../support/cluster.js";
import { repoRoot } from "../support/processes.js";

let redis: TestRedis;
let model: ScriptedModelServer;
let logDir: string;
let env: Record<string, string>;
let processes: ClusterProcesses;
const squatters: Server[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  model = await startScriptedModelServer();
  logDir = await mkdtemp(join(tmpdir(), "yiem-cluster-processes-"));
  env = {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test-launcher",
    YIEM_TOOLS_DIR: clusterToolsDir,
    LOG_LEVEL: "info",
  };
  processes = await startClusterProcesses({
    cwd: repoRoot,
    env,
    roleEnv: { worker: { WORKER_CONCURRENCY: "3" } },
    coordinators: 1,
    workers: 2,
    gateways: 1,
    logDir,
    expectTools: ["echoText"],
  });
}, 90_000);

afterAll(async () => {
  await processes?.close(3000);
  await model?.close();
  await redis?.stop();
  await rm(logDir, { recursive: true, force: true });
  for (const server of squatters) server.close();
});

/** A port a server of this test listens on (closed with the test file). */
async function listeningPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  squatters.push(server);
  return (server.address() as AddressInfo).port;
}

/** The lines of a slot's log file. */
async function logLines(name: string): Promise<string[]> {
  return (await readFile(join(logDir, `${name}.log`), "utf8")).split("\n");
}

describe("startClusterProcesses", () => {
  it("starts each role compiled, named after its place, on a port of its own that answers", async () => {
    expect(processes.coordinators.map((slot) => slot.name)).toEqual(["coordinator-1"]);
    expect(processes.workers.map((slot) => slot.name)).toEqual(["worker-1", "worker-2"]);
    expect(processes.gateways.map((slot) => slot.name)).toEqual(["gateway-1"]);
    expect(processes.workers[0]?.url).toBeUndefined();
    const [coordinator] = processes.coordinators;
    const [gateway] = processes.gateways;
    expect((await fetch(`${coordinator?.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gateway?.url}/v1/openapi.json`)).status).toBe(200);
    await expect
      .poll(async () => (await logLines("worker-2")).join("\n"))
      .toMatch(/"workerId":"worker-2".*"msg":"tool worker ready"/);
  });

  it("restarts a SIGKILLed worker in its slot, and logs both processes to the slot's file", async () => {
    const worker = processes.workers[0];
    if (!worker) throw new Error("no worker-1");
    const firstPid = worker.current().pid;
    worker.signal("SIGKILL");
    await worker.exited();
    expect(worker.isAlive()).toBe(false);
    await worker.restart();
    expect(worker.isAlive()).toBe(true);
    expect(worker.pids).toEqual([firstPid, worker.current().pid]);
    await expect
      .poll(async () => (await logLines("worker-1")).filter((l) => l.startsWith("--- ")))
      .toEqual([
        expect.stringContaining(`worker-1 started, pid ${firstPid}`),
        expect.stringContaining(`worker-1 started, pid ${worker.current().pid}`),
      ]);
  });

  it("keeps a coordinator's port when it restarts in its slot", async () => {
    const coordinator = processes.coordinators[0];
    if (!coordinator) throw new Error("no coordinator-1");
    const url = coordinator.url;
    coordinator.signal("SIGKILL");
    await coordinator.exited();
    await coordinator.restart();
    expect(coordinator.url).toBe(url);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("adds one more worker with its own environment, named after the next place (its worker id)", async () => {
    const added = await processes.add("worker", { env: { YIEM_WORKER_ID: "ignored" } });
    expect(added.name).toBe("worker-3");
    expect(processes.workers.map((slot) => slot.name)).toEqual([
      "worker-1",
      "worker-2",
      "worker-3",
    ]);
    await expect
      .poll(async () => (await logLines("worker-3")).join("\n"))
      .toMatch(/"workerId":"worker-3".*"msg":"tool worker ready"/);
  });

  it("stops a process that never lists an expected tool, and says which slot and tool", async () => {
    const failure = await startProcessSlot({
      role: "worker",
      name: "worker-without",
      env,
      cwd: repoRoot,
      expectTools: ["noSuchTool"],
    }).then(
      () => "",
      (err: Error) => err.message,
    );
    expect(failure).toMatch(/^worker-without \(pid \d+\) did not get ready: .*noSuchTool/);
    const pid = Number(/pid (\d+)/.exec(failure)?.[1]);
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });

  it("starts a gateway on another port when the one it picked was taken before its bind, and keeps that port", async () => {
    const taken = await listeningPort();
    const picks = [taken, await freePort()];
    const gateway = await startProcessSlot({
      role: "gateway",
      name: "gateway-race",
      env,
      cwd: repoRoot,
      pickPort: async () => picks.shift() ?? freePort(),
    });
    try {
      expect(gateway.pids).toHaveLength(2);
      expect(gateway.url).not.toContain(`:${taken}`);
      expect((await fetch(`${gateway.url}/v1/openapi.json`)).status).toBe(200);
    } finally {
      await gateway.stop(3000);
    }
  });

  it("gives up at once on a process that exits without its ready line, with its last words", async () => {
    const failure = await startProcessSlot({
      role: "gateway",
      name: "gateway-taken",
      env: { ...env, GATEWAY_PORT: String(await listeningPort()) },
      cwd: repoRoot,
      readyTimeoutMs: 60_000,
    }).then(
      () => "",
      (err: Error) => err.message,
    );
    // The wait ended with the process (not at its 60 s ready timeout), with the process's reason.
    expect(failure).toMatch(/^gateway-taken \(pid \d+\) did not get ready: .*exited .*is in use/s);
  });

  it("closes every process with SIGTERM, a SIGSTOPped one too, and each exits 0", async () => {
    const stopped = processes.workers[1];
    stopped?.signal("SIGSTOP");
    const all = [...processes.coordinators, ...processes.workers, ...processes.gateways];
    const exits = all.map((slot) => slot.current().exited);
    await processes.close(10_000);
    expect(await Promise.all(exits)).toEqual(all.map(() => 0));
    expect(all.some((slot) => slot.isAlive())).toBe(false);
  });
});
