import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cliProcess.js";
import { podmanRunArgs, readComposeServices } from "./composeServices.js";
import { podman, tryPodman } from "./podman.js";

/** The images the test runs: Yiem's, the example project's FROM it, and the Redis stand-in. */
export const IMAGES = {
  node: "localhost/yiem-node:20-bookworm",
  redis: "localhost/yiem-redis:bookworm",
  yiem: "localhost/yiem:local",
  project: "localhost/yiem-container-project:test",
} as const;

/** A free TCP port on the host's loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A gateway key in a keys file the containers' `node` user can read, made by `yiem keys create`. */
async function createGatewayKey(): Promise<{ key: string; file: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "yiem-containers-"));
  chmodSync(dir, 0o755);
  const file = join(dir, "gateway-keys.jsonl");
  const run = await runCli(
    ["keys", "create", "--name", "web", "--scopes", "submit,read", "--file", file],
    {},
  );
  const key = /^key: (\S+)$/m.exec(run.stdout)?.[1];
  if (run.code !== 0 || !key) throw new Error(`yiem keys create failed: ${run.stderr}`);
  chmodSync(file, 0o644); // only hashes: the container's node user reads it through the mount
  return { key, file, dir };
}

/** The compose file's services started with podman on one network, and how the host reaches them. */
export interface ComposeStack {
  project: string;
  network: string;
  /** The host environment compose would interpolate the file with. */
  env: Record<string, string>;
  coordinatorUrl: string;
  gatewayUrl: string;
  adminAuthorization: string;
  gatewayKey: string;
  /** Starts one more container of a service; resolves with its name. */
  start(
    service: string,
    overrides?: { image?: string; env?: Record<string, string> },
  ): Promise<string>;
  /** Every container, network and volume of the stack, and its keys file, removed. */
  remove(): Promise<void>;
}

/** Prepares a stack named `project` (nothing runs yet): its network, keys, ports and environment. */
export async function prepareComposeStack(project: string): Promise<ComposeStack> {
  const services = readComposeServices();
  const network = `${project}-net`;
  const [coordinatorPort, gatewayPort] = [await freePort(), await freePort()];
  const { key, file, dir } = await createGatewayKey();
  const password = randomBytes(12).toString("hex");
  const env: Record<string, string> = {
    YIEM_IMAGE: IMAGES.project,
    YIEM_REDIS_IMAGE: IMAGES.redis,
    YIEM_ADMIN_USER: "admin",
    YIEM_ADMIN_PASSWORD: password,
    OPENAI_BASE_URL: "http://scripted-model:4010/v1",
    OPENAI_API_KEY: "any",
    YIEM_MODEL: "scripted-model",
    YIEM_MODEL_SCRIPT: "/app/project/model.json",
    YIEM_COORDINATOR_PORTS: `127.0.0.1:${coordinatorPort}`,
    YIEM_GATEWAY_PORT: `127.0.0.1:${gatewayPort}`,
    YIEM_GATEWAY_KEYS: file,
  };
  await podman(["network", "create", network]);
  const counts = new Map<string, number>();
  const start: ComposeStack["start"] = async (name, overrides = {}) => {
    const service = services[name];
    if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
    const index = (counts.get(name) ?? 0) + 1;
    counts.set(name, index);
    const containerName = `${project}-${name}-${index}`;
    const image = overrides.image ?? service.image;
    const args = podmanRunArgs(
      { ...service, image, environment: { ...service.environment, ...overrides.env } },
      env,
      { project, network, containerName, serviceName: name },
    );
    await podman(args);
    return containerName;
  };
  const remove = async () => {
    const names = (await podman(["ps", "-a", "--format", "{{.Names}}"])).split("\n");
    const ours = names.filter((name) => name.startsWith(`${project}-`));
    if (ours.length > 0) await tryPodman(["rm", "-f", "-t", "0", ...ours]);
    await tryPodman(["network", "rm", "-f", network]);
    await tryPodman(["volume", "rm", "-f", `${project}-redis-data`]);
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    project,
    network,
    env,
    coordinatorUrl: `http://127.0.0.1:${coordinatorPort}`,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    adminAuthorization: `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`,
    gatewayKey: key,
    start,
    remove,
  };
}

/** Polls `check` until it returns a value other than undefined; rejects after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
}
