/**
 * Installing the way users install, then the README's quickstart as written (issue 30). A
 * private npm registry (verdaccio, no uplinks) runs on loopback; `npm publish` puts every
 * shipped workspace package on it; in a scratch folder in the OS temp folder (outside the repo)
 * the quickstart's blocks run as the README has them: its setup lines in `sh` (`npm i
 * @yiem/core …`, with `@yiem/*` taken from the private registry and the third-party packages
 * from the npm registry or npm's cache), its files written where their first lines say, its
 * three services started from their command lines, and its client run, whose output must be the
 * line the README shows under it. What the test adds: a private Redis (`REDIS_URL`), a free
 * port for the coordinator's HTTP (`PORT`) and for the model in place of 4010.
 *
 * Needs the npm registry (or a warm npm cache) for the third-party packages: set
 * YIEM_SKIP_REGISTRY_TEST=1 to skip it where neither is reachable. Publishes the built `dist`
 * (npm test builds first).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { freePort, startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MarkdownSnippet, snippetsRunBy } from "../support/markdownSnippets.js";
import { type PrivateRegistry, startPrivateRegistry } from "../support/privateRegistry.js";
import { repoRoot } from "../support/processes.js";
import { SHIPPED_PACKAGE_DIRS } from "./workspacePackages.js";

const run = promisify(execFile);
const THIS_TEST = "test/deploy/registryInstall.test.ts";
const SKIP = process.env.YIEM_SKIP_REGISTRY_TEST === "1";

/** This process's environment without npm's `npm_*` settings and NODE_OPTIONS (they name the repo). */
function cleanEnvironment(extra: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && !/^npm_/i.test(entry[0]) && entry[0] !== "NODE_OPTIONS",
  );
  return {
    ...Object.fromEntries(inherited),
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
    ...extra,
  };
}

/** Runs a shell script to its end in `cwd`; resolves with its stdout, throws with its output. */
async function runShell(cwd: string, script: string, env: Record<string, string>): Promise<string> {
  try {
    const options = { cwd, env, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 };
    return (await run("sh", ["-e", "-c", script], options)).stdout;
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    throw new Error(`sh -c "${script}" failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/** A command line of the quickstart running in a process group of its own. */
interface Service {
  line: string;
  lines: string[];
  waitFor(match: (line: string) => boolean, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `line` with `sh -c` in a process group of its own (`npx` does not pass SIGTERM on to
 * the bin it runs, so `stop` signals the whole group: SIGTERM, then SIGKILL after 5 s).
 */
function startService(line: string, cwd: string, env: Record<string, string>): Service {
  const child = spawn("sh", ["-c", line], {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const onData = (chunk: Buffer) =>
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid ?? 0), name);
    } catch {
      // the group is gone
    }
  };
  return {
    line,
    lines,
    async waitFor(match, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!lines.some(match)) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(
            `${line}: not ready (exit ${child.exitCode}):\n${lines.slice(-15).join("\n")}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      signal("SIGTERM");
      const timer = setTimeout(() => signal("SIGKILL"), 5000);
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 6000))]);
      clearTimeout(timer);
      signal("SIGKILL"); // whatever of the group is left (the bins npx started)
    },
  };
}

/** How each service of the quickstart says it is ready, by the bin its line runs. */
const READY: Record<string, (line: string) => boolean> = {
  "yiem-scripted-model": (line) => line.includes("OPENAI_BASE_URL="),
  "yiem-coordinator": (line) => line.includes('"msg":"coordinator ready"'),
  "yiem-worker": (line) =>
    line.includes('"msg":"tool worker ready"') && line.includes("getForecast"),
};

/** The quickstart's snippet of `role`, or a failure naming it. */
function quickstart(role: string): MarkdownSnippet {
  const snippet = snippetsRunBy("README.md", THIS_TEST).get(role);
  if (!snippet) throw new Error(`README.md has no snippet marked "run by ${THIS_TEST}: ${role}"`);
  return snippet;
}

/** The non-empty, non-comment lines of a shell snippet. */
const commandLines = (snippet: MarkdownSnippet) =>
  snippet.code.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));

let registry: PrivateRegistry | undefined;
let redis: TestRedis | undefined;
let workDir: string;
const services: Service[] = [];

/**
 * Starts the quickstart's services (README.md, "services") in `project` on free ports; returns
 * their environment. Its ports are picked seconds before `npx` binds them, so another test's
 * server may take one first: then every service stops and they start again on other ports.
 */
async function startQuickstartServices(
  project: string,
  tries = 3,
): Promise<Record<string, string>> {
  const modelPort = String(await freePort());
  const env = cleanEnvironment({ REDIS_URL: redis?.url ?? "", PORT: String(await freePort()) });
  const started = commandLines(quickstart("services")).map((line) => {
    const bin = Object.keys(READY).find((name) => line.includes(`npx ${name}`));
    if (!bin) throw new Error(`README.md: a quickstart service this test does not know: ${line}`);
    const service = startService(line.replaceAll("4010", modelPort), project, env);
    services.push(service);
    return service.waitFor(READY[bin] ?? (() => false), 90_000);
  });
  try {
    await Promise.all(started);
    return env;
  } catch (err) {
    if (tries <= 1 || !/EADDRINUSE/.test(String(err))) throw err;
    await Promise.all(services.splice(0).map((service) => service.stop()));
    return startQuickstartServices(project, tries - 1);
  }
}
let publishedAt = 0;

beforeAll(async () => {
  if (SKIP) return;
  publishedAt = Date.now();
  workDir = await realpath(await mkdtemp(join(tmpdir(), "yiem-registry-install-")));
  [registry, redis] = await Promise.all([
    startPrivateRegistry(),
    startTestRedis({ privateServer: true }),
  ]);
  const workspaces = SHIPPED_PACKAGE_DIRS.flatMap((dir) => ["--workspace", dir]);
  const publish = [
    "publish",
    ...workspaces,
    "--registry",
    registry.url,
    "--userconfig",
    registry.userconfig,
  ];
  await run("npm", publish, {
    cwd: repoRoot,
    env: cleanEnvironment({}),
    maxBuffer: 16 * 1024 * 1024,
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await registry?.stop();
  await redis?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  if (publishedAt)
    console.log(`registry install test: ${((Date.now() - publishedAt) / 1000).toFixed(1)} s`);
});

describe.skipIf(SKIP)("the README's quickstart, installed from a private npm registry", () => {
  let project: string;

  it("publishes every shipped package to the registry", async () => {
    for (const dir of SHIPPED_PACKAGE_DIRS) {
      const { name, version } = JSON.parse(
        await readFile(join(repoRoot, dir, "package.json"), "utf8"),
      );
      const response = await fetch(`${registry?.url}${name.replace("/", "%2f")}`);
      const meta = (await response.json()) as { versions?: Record<string, unknown> };
      expect(Object.keys(meta.versions ?? {}), name).toEqual([version]);
    }
  });

  it("installs the packages with the quickstart's setup lines, from the registry", async () => {
    const setup = quickstart("setup");
    const env = cleanEnvironment({
      NPM_CONFIG_USERCONFIG: registry?.userconfig ?? "",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_prefer_offline: "true",
    });
    await runShell(workDir, setup.code, env);
    const cd = /\bcd (\S+)/.exec(setup.code)?.[1];
    project = join(workDir, cd ?? ".");
    const lock = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8"));
    // The client's BullMQ is the major version Yiem runs on (bullmq 6 no longer brings ioredis).
    expect(lock.packages["node_modules/bullmq"]?.version).toMatch(/^5\./);
    for (const name of ["@yiem/core", "@yiem/coordinator", "@yiem/tool-worker", "@yiem/testing"]) {
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(
        new RegExp(`^${registry?.url}`),
      );
    }
  }, 300_000);

  it("answers the quickstart's question with its agent and its tool, as the README shows", async () => {
    for (const role of ["tools/getForecast.ts", "agents.yaml", "model.json", "ask.mjs"]) {
      const file = quickstart(`file ${role}`);
      await mkdir(dirname(join(project, role)), { recursive: true });
      await writeFile(join(project, role), file.code);
    }
    const env = await startQuickstartServices(project);
    // A person asks some seconds after starting the three; a coordinator reads the tools its
    // workers announce every 2 s (WORKER_TTL_MS / 3), so one asked at once may not know them yet.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(existsSync(join(project, "node_modules", "@yiem", "core", "dist", "index.js"))).toBe(
      true,
    );

    const [command, expected] = quickstart("ask").code.trim().split("\n");
    const stdout = await runShell(project, command ?? "", env);
    expect(stdout.trim()).toBe(expected?.replace(/^# /, ""));
  }, 120_000);
});
