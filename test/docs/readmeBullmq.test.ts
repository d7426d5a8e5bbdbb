/**
 * The plain-BullMQ snippet of docs/QUEUES.md works as pasted: the code block after its
 * `readmeBullmq.test.ts` marker is written to an empty folder outside the repository, what its
 * first line says to install is installed there from the npm registry, and `node` runs it
 * against a real coordinator and worker (on a private Redis, with the scripted model). The
 * snippet finds that Redis through `REDIS_URL`, which it reads itself; nothing else is changed.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { startTestCluster, type TestCluster } from "../support/cluster.js";
import { repoRoot } from "../support/processes.js";

const execFileAsync = promisify(execFile);

/**
 * Runs a command to its end; a failure names the command, how it ended (exit code, or killed
 * after `timeoutMs`) and what it printed.
 */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  try {
    const { cwd, env, timeoutMs } = options;
    return (await execFileAsync(command, args, { cwd, env, timeout: timeoutMs })).stdout;
  } catch (err) {
    const e = err as { code?: number; killed?: boolean; stdout?: string; stderr?: string };
    const ended = e.killed ? `still running after ${options.timeoutMs} ms` : `exit code ${e.code}`;
    throw new Error(
      `${command} ${args.join(" ")} in ${options.cwd}: ${ended}\nstdout: ${e.stdout}\nstderr: ${e.stderr}`,
    );
  }
}

/** The snippet and what its first line (`// <file>: …, npm i <packages> && node <file>`) says. */
interface Snippet {
  code: string;
  file: string;
  install: string[];
}

/** Reads the code block that follows the marker comment naming this test in docs/QUEUES.md. */
function readSnippet(): Snippet {
  const readme = readFileSync(join(repoRoot, "docs", "QUEUES.md"), "utf8");
  const block = /<!-- [^>]*readmeBullmq\.test\.ts[^>]*-->\n```js\n([\s\S]*?)\n```/.exec(readme);
  if (!block?.[1]) throw new Error("docs/QUEUES.md: no ```js block after the readmeBullmq marker");
  const code = `${block[1]}\n`;
  const firstLine = code.split("\n")[0] ?? "";
  const how = /^\/\/ ([\w.-]+\.mjs): .*?npm i ([^&]+?) && node \1$/.exec(firstLine);
  if (!how?.[1] || !how[2]) {
    throw new Error(
      `docs/QUEUES.md: the snippet's first line should read "// <file>.mjs: …, npm i <packages> && node <file>.mjs", got: ${firstLine}`,
    );
  }
  return { code, file: how[1], install: how[2].trim().split(/\s+/) };
}

/** This process's environment without npm's `npm_*` settings (they name the repo as prefix). */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")),
  );
  return { ...env, ...extra };
}

type Wire = { role: string; content?: unknown };

/** Tokyo and Lima: a getTime call, then an answer quoting its result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `It is ${String(last.content)}` };
  const timezone = String(last?.content).includes("Lima") ? "America/Lima" : "Asia/Tokyo";
  return { kind: "toolCalls", calls: [{ name: "getTime", arguments: { timezone } }] };
}

let cluster: TestCluster | undefined;
let folder: string | undefined;

afterAll(async () => {
  await cluster?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe("the plain-BullMQ snippet of docs/QUEUES.md", () => {
  it("installs, asks twice in one session, prints both answers and exits 0", async () => {
    const snippet = readSnippet();
    folder = await mkdtemp(join(tmpdir(), "yiem-readme-bullmq-"));
    await writeFile(join(folder, snippet.file), snippet.code);
    const npmArgs = ["i", ...snippet.install, "--no-audit", "--no-fund", "--prefer-offline"];
    await run("npm", npmArgs, { cwd: folder, env: plainEnv(), timeoutMs: 240_000 });
    expect(existsSync(join(folder, "node_modules", "bullmq")), "bullmq installed there").toBe(true);

    // The snippet's prefix is the default one, so its own Redis keeps it apart from other tests.
    cluster = await startTestCluster({
      workers: 1,
      redis: { privateServer: true },
      env: { YIEM_PREFIX: "yiem" },
      model: { respond },
    });
    const env = plainEnv({ REDIS_URL: cluster.redis.url });
    const stdout = await run("node", [snippet.file], { cwd: folder, env, timeoutMs: 60_000 });

    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^It is Current time in Asia\/Tokyo: \d{4}-\d\d-\d\d \d\d:\d\d/);
    expect(lines[1]).toMatch(/^It is Current time in America\/Lima: \d{4}-\d\d-\d\d \d\d:\d\d/);
    const second = cluster.model.requests.at(-1)?.body.messages as Wire[];
    expect(second.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "What time is it in Tokyo?",
      "And in Lima?",
    ]);
  }, 360_000);
});
