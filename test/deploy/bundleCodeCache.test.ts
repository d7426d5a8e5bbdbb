/**
 * A bundled app compiles its code with V8's code cache (`scripts/bundleLoader.ts`): a process
 * that did its first piece of work leaves a `warm` cache beside its code that a new process
 * takes (though the coordinator changed a V8 flag at run time), a process started from it
 * still imports what the bundle leaves outside (a TypeScript tool file through tsx), and a
 * cache that cannot be written costs nothing but itself. Each test runs the coordinator's
 * bundle from a tree of its own (the bundle and its code copied, the rest linked), so no other
 * test's process writes its cache meanwhile.
 */
import { execFileSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { YiemClient } from "@yiem/core";
import {
  freePort,
  logEntries,
  logMessage,
  type ScriptedModelServer,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterToolsDir } from "../support/cluster.js";
import { repoRoot, spawnCommand } from "../support/processes.js";

let redis: TestRedis;
let model: ScriptedModelServer;
const started: TestProcess[] = [];
const clients: YiemClient[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  model = await startScriptedModelServer({ respond: () => ({ kind: "text", text: "hello" }) });
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop(3000)));
  await Promise.all(clients.map((c) => c.close()));
  await model?.close();
  await redis?.stop();
});

/**
 * A tree of its own for the coordinator's bundle: `apps/coordinator/{package.json,dist/main.bundle.*}`
 * copied (the `build` cache left out), `packages` and `node_modules` linked to the repository's,
 * so the bundle finds what it reads beside its sources. Returns the copy's `dist`.
 */
function privateTree(): string {
  const root = mkdtempSync(join(tmpdir(), "yiem-code-cache-"));
  const dist = join(root, "apps", "coordinator", "dist");
  mkdirSync(dist, { recursive: true });
  const from = join(repoRoot, "apps", "coordinator");
  cpSync(join(from, "package.json"), join(root, "apps", "coordinator", "package.json"));
  for (const name of ["main.bundle.js", "main.bundle.cjs"]) {
    cpSync(join(from, "dist", name), join(dist, name));
  }
  for (const name of ["packages", "node_modules"])
    symlinkSync(join(repoRoot, name), join(root, name));
  return dist;
}

/** Starts the coordinator of `dist` on its own prefix, with `env` on top. */
async function startCoordinator(
  dist: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<TestProcess> {
  const coordinator = spawnCommand(["node", join(dist, "main.bundle.js")], {
    REDIS_URL: redis.url,
    YIEM_PREFIX: prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-test",
    YIEM_TOOLS_DIR: "",
    PORT: String(await freePort()),
    LOG_LEVEL: "info",
    ...env,
  });
  started.push(coordinator);
  await coordinator.waitForLine(logMessage("coordinator ready"), 60_000);
  return coordinator;
}

/** Sends one run on `prefix` and waits for its answer. */
async function runOnce(prefix: string): Promise<string | undefined> {
  const client = new YiemClient({ redis: redis.url, prefix });
  clients.push(client);
  const { runId } = await client.send("hi");
  const response = await client.waitForResponse(runId, { timeoutMs: 30_000 });
  return response.stopReason;
}

/** The cache files (and files being written) in `dist`. */
function cacheFiles(dist: string): string[] {
  return readdirSync(dist).filter((name) => name.includes(".v8cache"));
}

/** Resolves with the first cache file of `tier` in `dist`, waiting up to 20 s. */
async function waitForCache(dist: string, tier: string): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 100) {
    const found = cacheFiles(dist).find((name) => name.endsWith(`.${tier}.v8cache`));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${tier} cache in ${dist}: ${cacheFiles(dist).join(", ")}`);
}

/** Whether a new `node` (as a process starts) takes `cache` for the code of `dist`. */
function takenByNewProcess(dist: string, cache: string): boolean {
  const check = `const { Script } = require("node:vm"); const { readFileSync } = require("node:fs");
const [code, cache] = process.argv.slice(1);
const script = new Script(readFileSync(code, "latin1"), { filename: code, cachedData: readFileSync(cache) });
process.stdout.write(String(script.cachedDataRejected));`;
  const rejected = execFileSync(
    process.execPath,
    ["-e", check, join(dist, "main.bundle.cjs"), join(dist, cache)],
    { encoding: "utf8" },
  );
  return rejected === "false";
}

describe("a bundled app's code cache", () => {
  it("is left warm by a coordinator's first run, taken by a new process, which still imports tool files", async () => {
    const dist = privateTree();
    expect(cacheFiles(dist)).toEqual([]);
    const first = `${redis.prefix}-first`;
    await startCoordinator(dist, first);
    expect(await runOnce(first)).toBe("stop");
    const warm = await waitForCache(dist, "warm");
    // The coordinator set --heap-growing-percent at start: the cache is written as V8 started.
    expect(takenByNewProcess(dist, warm)).toBe(true);

    const second = `${redis.prefix}-second`;
    const next = await startCoordinator(dist, second, { YIEM_TOOLS_DIR: clusterToolsDir });
    // A TypeScript tool file is imported through tsx: an import() of code run from the cache.
    expect(logEntries(next, "coordinator ready")[0]?.tools).toEqual(
      expect.arrayContaining(["sleepFor", "echoText"]),
    );
    expect(await runOnce(second)).toBe("stop");
    expect(cacheFiles(dist).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("that cannot be written costs nothing: the process starts, answers, and leaves no file", async () => {
    const dist = privateTree();
    const firstLine = readFileSync(join(dist, "main.bundle.cjs"), "latin1").slice(0, 64);
    const key = /^\/\*yiem-bundle ([0-9a-f]{16})\*\//.exec(firstLine)?.[1];
    // A folder where each cache file would go: reading one fails, and so does renaming onto it.
    const blocked = ["build", "start", "warm"].map((tier) =>
      join(dist, `main.bundle.${key}.${process.version}-${process.arch}.${tier}.v8cache`),
    );
    for (const path of blocked) mkdirSync(path);
    const prefix = `${redis.prefix}-blocked`;
    const coordinator = await startCoordinator(dist, prefix);
    expect(await runOnce(prefix)).toBe("stop");
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the warm tier's write
    expect(await runOnce(prefix)).toBe("stop");
    expect(coordinator.child.exitCode).toBeNull();
    expect(coordinator.lines.join("\n")).not.toContain("unhandled promise rejection");
    expect(cacheFiles(dist).sort()).toEqual(
      blocked.map((path) => path.slice(dist.length + 1)).sort(),
    );
    for (const path of blocked) expect(statSync(path).isDirectory()).toBe(true);
  });
});
