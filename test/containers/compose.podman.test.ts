import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sampleOf } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";
import { healthcheckCommand, readComposeServices } from "./composeServices.js";
import { type ComposeStack, IMAGES, prepareComposeStack, waitUntil } from "./composeStack.js";
import { buildImage, containerState, podman, runCommand, tryPodman } from "./podman.js";

// `npm run test:containers` (not part of `npm test`: the image builds alone take minutes).
// Builds the repository's Dockerfile with podman, and the example project's image FROM it
// (examples/container-project: a zod tool, a tool with its own dependency, an agents file),
// then starts docker-compose.yml's services as the file says, one podman container each, on
// one network: redis, the scripted model, a coordinator, two tool workers and the gateway.

const project = `yiemct${process.pid}`;
const services = readComposeServices();
const figures: Record<string, string> = {};
let stack: ComposeStack;
const scratch: string[] = [];

/** `node -e` inside a container: fetches a URL there and prints the body. */
async function fetchInside(container: string, url: string): Promise<string> {
  return podman([
    "exec",
    container,
    "node",
    "-e",
    `fetch(${JSON.stringify(url)}).then((r) => r.text()).then((t) => process.stdout.write(t))`,
  ]);
}

/** The live workers, as `yiem workers --json` run in the coordinator's container lists them. */
async function liveWorkers(): Promise<{ workerId: string }[]> {
  const text = await podman([
    "exec",
    `${project}-coordinator-1`,
    "node",
    "apps/cli/bin/yiem.js",
    "workers",
    "--json",
  ]);
  return JSON.parse(text) as { workerId: string }[];
}

/** A gateway request from the host with the test's key. */
function gateway(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${stack.gatewayKey}`, "content-type": "application/json" },
  });
}

/** A run's answer, as the gateway gives it. */
interface RunResult {
  response: { content: { type: string; text?: string }[] };
  usage?: { modelCalls: number; toolCalls: number };
}

/** `GET /v1/runs/{runId}`. */
interface RunStatus {
  status: "waiting" | "running" | "parked" | "completed" | "failed";
  result?: RunResult;
  error?: string;
}

/** The text of a run's answer. */
function answerText(result: RunResult | undefined): string {
  return (result?.response.content ?? []).map((part) => part.text ?? "").join("");
}

beforeAll(async () => {
  const started = Date.now();
  const base = await runCommand(["bash", "test/containers/baseImages.sh"]);
  if (base.code !== 0) throw new Error(`baseImages.sh failed: ${base.stderr}`);
  figures.baseImages = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  figures.yiemImage = `${(await buildImage(IMAGES.yiem, repoRoot, { NODE_IMAGE: IMAGES.node })).toFixed(0)} s`;
  const projectDir = join(repoRoot, "examples/container-project");
  figures.projectImage = `${(await buildImage(IMAGES.project, projectDir, { YIEM_IMAGE: IMAGES.yiem })).toFixed(0)} s`;
  stack = await prepareComposeStack(project);
  const upStarted = Date.now();
  const redis = await stack.start("redis");
  const redisCheck = healthcheckCommand(services.redis ?? { image: "" });
  await waitUntil("redis healthy", async () =>
    (await tryPodman(["exec", redis, ...redisCheck])).code === 0 ? true : undefined,
  );
  await stack.start("scripted-model");
  await stack.start("coordinator");
  await stack.start("tool-worker");
  await stack.start("tool-worker");
  await stack.start("gateway");
  await waitUntil("the coordinator ready from the host", async () =>
    (await fetch(`${stack.coordinatorUrl}/readyz`)).ok ? true : undefined,
  );
  await waitUntil("two live workers", async () =>
    (await liveWorkers()).length === 2 ? true : undefined,
  );
  await waitUntil("the gateway from the host", async () =>
    (await fetch(`${stack.gatewayUrl}/v1/openapi.json`)).ok ? true : undefined,
  );
  figures.stackUp = `${((Date.now() - upStarted) / 1000).toFixed(0)} s`;
}, 45 * 60_000);

afterAll(async () => {
  await stack?.remove();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  console.log(`container test figures: ${JSON.stringify(figures)}`);
}, 120_000);

describe("docker-compose.yml under podman", () => {
  it("answers a question through the gateway from the host, with the project's zod tool run on a worker", async () => {
    const response = await gateway("/v1/runs?wait=true", {
      method: "POST",
      body: JSON.stringify({ input: "What is the forecast for Paris?" }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as RunResult;
    expect(answerText(body)).toBe("Sunny in Paris for 1 day(s).");
    expect(body.usage).toMatchObject({ modelCalls: 2, toolCalls: 1 });
  });

  it("serves Bull Board behind its credentials, and /healthz, /readyz and /metrics, to the host", async () => {
    expect((await fetch(`${stack.coordinatorUrl}/admin/queues`)).status).toBe(401);
    const board = await fetch(`${stack.coordinatorUrl}/admin/queues`, {
      headers: { authorization: stack.adminAuthorization },
    });
    expect(board.status).toBe(200);
    expect(await board.text()).toMatch(/<html/i);
    const health = await fetch(`${stack.coordinatorUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    expect(await (await fetch(`${stack.coordinatorUrl}/readyz`)).text()).toBe("ready\n");
    const metrics = await (await fetch(`${stack.coordinatorUrl}/metrics`)).text();
    expect(metrics).toMatch(/^yiem_queue_jobs\{/m);
  });

  it("passes every service's own healthcheck inside its container", async () => {
    for (const name of ["redis", "coordinator", "tool-worker", "gateway"]) {
      const check = healthcheckCommand(services[name] ?? { image: "" });
      const result = await tryPodman(["exec", `${project}-${name}-1`, ...check]);
      expect(result.code, `${name}: ${check.join(" ")}: ${result.stderr}`).toBe(0);
    }
  });

  it("scales the tool workers to three, each announced to the coordinators", async () => {
    await stack.start("tool-worker");
    const workers = await waitUntil("three live workers", async () => {
      const live = await liveWorkers();
      return live.length === 3 ? live : undefined;
    });
    expect(new Set(workers.map((worker) => worker.workerId)).size).toBe(3);
  });

  it("drains a worker on SIGTERM: the call it is running completes there, and it exits 0", async () => {
    const accepted = await gateway("/v1/runs", {
      method: "POST",
      body: JSON.stringify({ input: "Take your time." }),
    });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    const workers = [1, 2, 3].map((index) => `${project}-tool-worker-${index}`);
    const busy = await waitUntil("the worker running waitFor", async () => {
      for (const worker of workers) {
        const metrics = await fetchInside(worker, "http://127.0.0.1:3001/metrics");
        if (sampleOf(metrics, 'yiem_worker_tool_calls_in_flight{tool="waitFor"}') === 1)
          return worker;
      }
      return undefined;
    });
    const hostname = await podman(["inspect", "--format", "{{.Config.Hostname}}", busy]);
    const stopped = podman(["stop", busy]); // SIGTERM, then SIGKILL after stop_grace_period
    const result = await waitUntil(
      "the run's answer",
      async () => {
        const status = (await (await gateway(`/v1/runs/${runId}`)).json()) as RunStatus;
        return status.status === "completed" || status.status === "failed" ? status : undefined;
      },
      90_000,
    );
    await stopped;
    expect(result.status).toBe("completed");
    expect(answerText(result.result)).toBe(`Done: waited 8 seconds on ${hostname}.`);
    expect(await containerState(busy)).toEqual({ running: false, exitCode: 0 });
    const logs = await podman(["logs", busy]);
    expect(logs).toMatch(/"msg":"shutting down"/);
    expect(logs).toMatch(/"msg":"stopped cleanly"/);
  });

  it("stops a worker whose mounted tools cannot load (no node_modules), and starts one whose mount has them", async () => {
    // The tools folder alone, mounted outside /app: zod and humanize-duration resolve nowhere.
    const tools = join(repoRoot, "examples/container-project/tools");
    const refused = await podman([
      "run",
      "--name",
      `${project}-bare-tools`,
      "--network",
      stack.network,
      "-v",
      `${tools}:/tools:ro`,
      "-e",
      "REDIS_URL=redis://redis:6379",
      "-e",
      "YIEM_PREFIX=mounted",
      "-e",
      "YIEM_TOOLS_DIR=/tools",
      IMAGES.yiem,
      "node",
      "apps/tool-worker/dist/main.js",
    ]).then(
      () => ({ code: 0, text: "" }),
      (err: Error) => ({ code: 1, text: err.message }),
    );
    expect(refused.code).toBe(1);
    expect(refused.text).toContain("YIEM_TOOLS_STRICT=1 and 2 tool file(s) failed to load");
    expect(refused.text).toMatch(/getForecast\.ts.*zod/);
    // The project folder with its node_modules (npm ci on the host), mounted at /app/project.
    const copy = mkdtempSync(join(tmpdir(), "yiem-project-"));
    scratch.push(copy);
    cpSync(join(repoRoot, "examples/container-project"), copy, { recursive: true });
    const install = await runCommand(["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"], copy);
    expect(install.code, install.stderr).toBe(0);
    await runCommand(["chmod", "-R", "a+rX", copy]);
    const mounted = `${project}-mounted-tools`;
    await podman([
      "run",
      "-d",
      "--name",
      mounted,
      "--network",
      stack.network,
      "-v",
      `${copy}:/app/project:ro`,
      "-e",
      "REDIS_URL=redis://redis:6379",
      "-e",
      "YIEM_PREFIX=mounted",
      "-e",
      "YIEM_TOOLS_DIR=/app/project/tools",
      IMAGES.yiem,
      "node",
      "apps/tool-worker/dist/main.js",
    ]);
    const ready = await waitUntil("the mounted worker ready", async () => {
      const logs = await podman(["logs", mounted]);
      return logs.split("\n").find((line) => line.includes('"msg":"tool worker ready"'));
    });
    expect(JSON.parse(ready).tools).toEqual(expect.arrayContaining(["getForecast", "waitFor"]));
  });
});
