/**
 * The packages as a user installs them: `npm pack` of every shipped workspace package, the
 * tarballs installed with the README's command into a scratch project in the OS temp folder (outside the repo,
 * so nothing can resolve back into it, and no `yiem-source` condition), and there, as
 * processes: the in-process example of docs/AGENTS.md, a coordinator and a worker started from the
 * installed bins answering a plain-BullMQ client, and the installed `yiem`. Packs the built
 * `dist` (npm test builds first). npm fetches the third-party dependencies from the
 * registry, or its cache.
 */
import { execFile } from "node:child_process";
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import {
  freePort,
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
  startTestRedis,
  type TestProcess,
  type TestRedis,
} from "@yiem/testing";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, spawnCommand } from "../support/processes.js";
import {
  type PackedPackage,
  packPackages,
  readManifest,
  SHIPPED_PACKAGE_DIRS,
} from "./workspacePackages.js";

const run = promisify(execFile);

/** Packing and installing can take a while on a cold npm cache. */
const INSTALL_TIMEOUT_MS = 240_000;
/** Each scenario starts processes and waits for a model round trip or two. */
const SCENARIO_TIMEOUT_MS = 60_000;

/** Asks for `getTime` in Tokyo, then answers with the tool's result: `final: <result>`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `final: ${String(last.content)}` };
  return { kind: "toolCalls", calls: [{ name: "getTime", arguments: { timezone: "Asia/Tokyo" } }] };
}

/**
 * This process's environment for a command of the scratch project, without what would tie
 * it to the repo: npm's `npm_*` variables (set when the tests run under `npm test`) and
 * NODE_OPTIONS. This Node comes first on PATH, for the bins' `#!/usr/bin/env node`.
 */
function scratchEnvironment(extra: Record<string, string> = {}): Record<string, string> {
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

/** Runs a command to its end in `cwd`; resolves with its stdout, throws with its output. */
async function runIn(
  cwd: string,
  command: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<string> {
  try {
    const options = { cwd, env: scratchEnvironment(extraEnv), maxBuffer: 16 * 1024 * 1024 };
    return (await run(command, args, options)).stdout;
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/**
 * The README's command that installs the tarballs of `npm run pack` (its "Install" section:
 * `npm i /path/to/yiem/tarballs/*.tgz …`), with the tarballs' folder for `/path/to/yiem/tarballs`.
 */
async function readmeTarballInstall(tarballs: string): Promise<string> {
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const line = /^\s*(npm i \/path\/to\/yiem\/tarballs\/\*\.tgz.*)$/m.exec(readme)?.[1];
  if (!line) throw new Error("README.md has no `npm i /path/to/yiem/tarballs/*.tgz` line");
  return line.replace("/path/to/yiem/tarballs", tarballs);
}

/**
 * Creates an empty ESM project in `dir` and installs the tarballs of `tarballs` into it as
 * the README says, then `extra` packages from the registry.
 */
async function installScratchProject(
  dir: string,
  tarballs: string,
  extra: string[],
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const manifest = { name: "yiem-scratch", version: "1.0.0", private: true, type: "module" };
  await writeFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const flags = "--no-audit --no-fund --prefer-offline --loglevel=error";
  await runIn(dir, "sh", ["-c", `${await readmeTarballInstall(tarballs)} ${flags}`]);
  await runIn(dir, "npm", ["install", ...flags.split(" "), ...extra]);
}

/**
 * The in-process example of docs/AGENTS.md (the first `ts` block under "A tool, an agent, a
 * run (in-process)"), as JavaScript, followed by a line that prints what it resolved and
 * answered.
 */
async function readmeInProcessExample(): Promise<string> {
  const readme = await readFile(join(repoRoot, "docs", "AGENTS.md"), "utf8");
  const heading = "## A tool, an agent, a run (in-process)";
  const section = readme.slice(readme.indexOf(heading));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!readme.includes(heading) || !code) {
    throw new Error(`docs/AGENTS.md has no \`ts\` block under "${heading}"`);
  }
  const js = ts.transpileModule(code, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
  const report = "JSON.stringify({ resolved: import.meta.resolve('@yiem/core'), answer })";
  return `${js}\nconsole.log(\`EXAMPLE \${${report}}\`);\n`;
}

/** A plain BullMQ client of the coordinator queue: one question, its answer printed. */
const PLAIN_BULLMQ_CLIENT = `import { Queue, QueueEvents } from "bullmq";

const url = new URL(process.env.REDIS_URL);
const connection = { host: url.hostname, port: Number(url.port) };
const prefix = \`\${process.env.YIEM_PREFIX}:bull\`;
const queue = new Queue("coordinator", { connection, prefix });
const events = new QueueEvents("coordinator", { connection, prefix });
try {
  await events.waitUntilReady();
  const job = await queue.add(
    "ask",
    { input: "What time is it in Tokyo?" },
    { removeOnComplete: 100, removeOnFail: 100 },
  );
  const answer = await job.waitUntilFinished(events, 30_000);
  console.log(JSON.stringify({ resolved: import.meta.resolve("bullmq"), answer }));
} finally {
  await queue.close();
  await events.close();
}
`;

/** The text of an assistant message's first text part. */
function firstText(message: { content?: Array<{ type: string; text?: string }> }): string {
  return message.content?.find((part) => part.type === "text")?.text ?? "";
}

let workDir: string;
let project: string;
let packed: PackedPackage[];
let model: ScriptedModelServer;

/** Where a package of the scratch project lives. */
const installedDir = (name: string) => join(project, "node_modules", ...name.split("/"));

beforeAll(async () => {
  model = await startScriptedModelServer({ respond });
  workDir = await realpath(await mkdtemp(join(tmpdir(), "yiem-packages-")));
  project = join(workDir, "project");
  packed = await packPackages(SHIPPED_PACKAGE_DIRS, join(workDir, "tarballs"));
  const core = await readManifest("packages/core");
  const bullmq = `bullmq@${core.dependencies?.bullmq}`; // the version Yiem runs on
  await installScratchProject(project, join(workDir, "tarballs"), [bullmq]);
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await model?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("the packed packages", () => {
  it("ship dist with its types, the Lua scripts, the sandbox host and a licence", async () => {
    const core = packed.find((p) => p.manifest.name === "@yiem/core");
    const scripts = await readdir(join(repoRoot, "packages/core/src/redis/scripts"));
    const features = join(repoRoot, "packages/core/src/features");
    const featureScripts = (await readdir(features, { recursive: true }))
      .filter((f) => f.endsWith(".lua"))
      .map((f) => `src/features/${f}`);
    expect(featureScripts.length).toBeGreaterThan(0);
    expect(core?.files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "dist/client/index.js",
        "dist/client/index.d.ts",
        "dist/sandbox/sandboxHost.mjs",
        ...scripts.filter((f) => f.endsWith(".lua")).map((f) => `src/redis/scripts/${f}`),
        ...featureScripts,
      ]),
    );
    for (const pkg of packed) {
      expect(pkg.files, pkg.manifest.name).toEqual(
        expect.arrayContaining(["package.json", "LICENSE", "README.md"]),
      );
      expect(pkg.files.some((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toBe(false);
    }
  });

  it("install from their tarballs into the scratch project, as real folders (no links into the repo)", async () => {
    const lock = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { resolved?: string; link?: boolean }>;
    };
    for (const pkg of packed) {
      const entry = lock.packages[`node_modules/${pkg.manifest.name}`];
      expect(entry?.resolved, pkg.manifest.name).toMatch(/^file:.*\.tgz$/);
      expect(entry?.link, pkg.manifest.name).toBeUndefined();
      expect((await lstat(installedDir(pkg.manifest.name))).isSymbolicLink()).toBe(false);
    }
  });

  it(
    "run the in-process example of docs/AGENTS.md: a YiemAgent with a tool answers from @yiem/core's dist",
    async () => {
      const example = join(project, "example.mjs");
      await writeFile(example, await readmeInProcessExample());
      const stdout = await runIn(project, process.execPath, [example], {
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: "sk-test",
      });
      const line = stdout.split("\n").find((l) => l.startsWith("EXAMPLE "));
      const { resolved, answer } = JSON.parse(line?.slice("EXAMPLE ".length) ?? "{}");
      expect(resolved).toBe(`file://${installedDir("@yiem/core")}/dist/index.js`);
      expect(answer.stopReason).toBe("stop");
      // The README's getTime formats with en-GB: "01/12/2026, 18:05:09".
      expect(firstText(answer)).toMatch(/^final: \d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2}$/);
      expect(stdout).toContain("toolExecEnd"); // the example's event sink saw the tool run
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    "run the installed yiem-scripted-model with its shipped example script, and the in-process example against it",
    async () => {
      const bin = join(project, "node_modules", ".bin", "yiem-scripted-model");
      const script = join(installedDir("@yiem/testing"), "examples", "time.json");
      const port = String(await freePort());
      const server = spawnCommand(
        [bin, "--script", script, "--port", port],
        scratchEnvironment(),
        project,
      );
      try {
        await server.waitForLine((line) => line.includes("OPENAI_BASE_URL="), 30_000);
        const example = join(project, "example-scripted.mjs");
        await writeFile(example, await readmeInProcessExample());
        const stdout = await runIn(project, process.execPath, [example], {
          OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
          OPENAI_API_KEY: "any",
        });
        const line = stdout.split("\n").find((l) => l.startsWith("EXAMPLE "));
        const { answer } = JSON.parse(line?.slice("EXAMPLE ".length) ?? "{}");
        // The script's "tokyo and lima" rule: two getTime calls, then their results quoted.
        expect(firstText(answer)).toMatch(
          /^Here you are:\n.*\d{2}:\d{2}:\d{2}[\s\S]*\d{2}:\d{2}:\d{2}/,
        );
      } finally {
        await server.stop(2000);
      }
    },
    SCENARIO_TIMEOUT_MS,
  );

  describe("a cluster from the installed bins", () => {
    let redis: TestRedis;
    const started: TestProcess[] = [];
    let env: Record<string, string>;

    /** Starts an installed bin in the scratch project and waits for its ready line. */
    async function startBin(bin: string, ready: string): Promise<TestProcess> {
      const path = join(project, "node_modules", ".bin", bin);
      const child = spawnCommand([path], env, project);
      started.push(child);
      const exitedFirst = child.exited.then((code) => {
        throw new Error(`${bin} exited (${code}) before "${ready}":\n${child.lines.join("\n")}`);
      });
      await Promise.race([
        child.waitForLine((line) => line.includes(`"msg":"${ready}"`), 30_000),
        exitedFirst,
      ]);
      return child;
    }

    beforeAll(async () => {
      redis = await startTestRedis({ privateServer: true });
      env = {
        ...scratchEnvironment(),
        NODE_OPTIONS: "",
        REDIS_URL: redis.url,
        YIEM_PREFIX: redis.prefix,
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: "sk-test",
        YIEM_MODEL: "scripted-model",
        PORT: String(await freePort()),
      };
      await startBin("yiem-coordinator", "coordinator ready");
      await startBin("yiem-worker", "tool worker ready");
    }, SCENARIO_TIMEOUT_MS);

    afterAll(async () => {
      await Promise.all(started.map((p) => p.stop(2000)));
      await redis?.stop();
    });

    it("links each bin to its package inside the scratch node_modules", async () => {
      const bins = packed.flatMap((pkg) =>
        Object.entries(pkg.manifest.bin ?? {}).map(([bin, target]) => ({ pkg, bin, target })),
      );
      expect(bins.map((b) => b.bin).sort()).toEqual([
        "yiem",
        "yiem-coordinator",
        "yiem-gateway",
        "yiem-scripted-model",
        "yiem-worker",
      ]);
      for (const { pkg, bin, target } of bins) {
        const resolved = await realpath(join(project, "node_modules", ".bin", bin));
        expect(resolved).toBe(join(installedDir(pkg.manifest.name), target));
      }
    });

    it(
      "answer a plain-BullMQ job on the coordinator queue with a built-in tool run on the worker",
      async () => {
        const client = join(project, "client.mjs");
        await writeFile(client, PLAIN_BULLMQ_CLIENT);
        const stdout = await runIn(project, process.execPath, [client], env);
        const { resolved, answer } = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
        expect(resolved).toMatch(new RegExp(`^file://${installedDir("bullmq")}/`));
        expect(answer.sessionId).toEqual(expect.any(String));
        expect(firstText(answer.response)).toMatch(
          /^final: Current time in Asia\/Tokyo: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \(UTC\+09:00\)$/,
        );
      },
      SCENARIO_TIMEOUT_MS,
    );

    it(
      "answer the installed yiem: --version prints the package's version, send prints the answer",
      async () => {
        const yiem = join(project, "node_modules", ".bin", "yiem");
        const cli = packed.find((p) => p.manifest.bin?.yiem);
        expect((await runIn(project, yiem, ["--version"], env)).trim()).toBe(
          `yiem ${cli?.manifest.version}`,
        );
        const stdout = await runIn(project, yiem, ["send", "What time is it in Tokyo?"], env);
        expect(stdout).toMatch(/^session [0-9a-f-]{36}/m);
        expect(stdout).toMatch(/final: Current time in Asia\/Tokyo: /);
      },
      SCENARIO_TIMEOUT_MS,
    );
  });
});
