/**
 * The apps as deployed are one file each (`apps/<app>/dist/main.bundle.js`, built by
 * `npm run build`). A tool file outside the repository still gets the process's own
 * `@yiem/core` (the bundle's copy, not a second one loaded beside it, nor the folder's own),
 * from ESM and from CommonJS alike, and the bundle still finds what it reads beside its
 * sources (Lua scripts, thread files, built-in tool files). Its worker threads run from files
 * of their own beside it (`registerBundledThreads`), not from modules loaded one by one, and a
 * start loads no module it does not need (OpenTelemetry with tracing off, msgpackr's native
 * extractor).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort, logEntries, logMessage, startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCommand } from "../support/processes.js";

/**
 * Each tool names itself after what it saw: whether its `@yiem/core` is the copy the bundle
 * registered for its tool files, and the `DEFAULTS.prefix` it read (the folder's own copy says
 * `folder-copy`).
 */
const TOOL_FILES: Record<string, string> = {
  "esmView.mjs": `import { DEFAULTS, ToolStore } from "@yiem/core";
const own = globalThis[Symbol.for("yiem.ownPackages")]?.["@yiem/core"];
export function getTool() {
  return { name: \`esm_\${own?.ToolStore === ToolStore}_\${DEFAULTS.prefix}\`, label: "l", description: "d",
    inputSchema: { type: "object" }, execute: () => ({ content: [], details: {} }) };
}
`,
  "cjsView.cjs": `const { DEFAULTS, ToolStore } = require("@yiem/core");
const own = globalThis[Symbol.for("yiem.ownPackages")]?.["@yiem/core"];
exports.getTool = () => ({ name: \`cjs_\${own?.ToolStore === ToolStore}_\${DEFAULTS.prefix}\`, label: "l",
  description: "d", inputSchema: { type: "object" }, execute: () => ({ content: [], details: {} }) });
`,
};

/**
 * A tool whose only `@yiem/core` import is in a helper in a folder beside it: the process must
 * still see that the folder needs its own packages.
 */
const HELPER_TOOL_FILES: Record<string, string> = {
  "helperView.mjs": `import { prefixSeen } from "./lib/coreView.mjs";
export function getTool() {
  return { name: \`helper_\${prefixSeen}\`, label: "l", description: "d",
    inputSchema: { type: "object" }, execute: () => ({ content: [], details: {} }) };
}
`,
  "lib/coreView.mjs": `import { DEFAULTS } from "@yiem/core";
export const prefixSeen = DEFAULTS.prefix;
`,
};

/** A folder outside the repo holding `files` (paths relative to it), and no node_modules. */
function writeFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "yiem-bundled-tools-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** A tool folder outside the repo with its own (different) `@yiem/core` in its node_modules. */
function writeToolFolder(): string {
  const dir = writeFolder(TOOL_FILES);
  const fake = join(dir, "node_modules", "@yiem", "core");
  mkdirSync(fake, { recursive: true });
  writeFileSync(
    join(fake, "package.json"),
    JSON.stringify({ name: "@yiem/core", version: "0.0.1", main: "index.js" }),
  );
  writeFileSync(
    join(fake, "index.js"),
    `exports.DEFAULTS = { prefix: "folder-copy" }; exports.ToolStore = class {};`,
  );
  return dir;
}

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** The environment of a bundled app started on the test Redis with `more`. */
async function appEnv(more: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_API_KEY: "sk-test",
    PORT: String(await freePort()),
    ...more,
  };
}

/** Starts `entry` with the tools of `toolsDir` (strict) and returns the tools its ready line lists. */
async function readyTools(entry: string, ready: string, toolsDir: string): Promise<unknown> {
  const app = spawnCommand(
    ["node", entry],
    await appEnv({ YIEM_TOOLS_DIR: toolsDir, YIEM_TOOLS_STRICT: "1" }),
  );
  try {
    await app.waitForLine(logMessage(ready), 30_000);
    return logEntries(app, ready)[0]?.tools;
  } finally {
    app.signal("SIGTERM");
    expect(await app.exited).toBe(0);
  }
}

describe("the bundled apps", () => {
  it.each([
    ["coordinator", "apps/coordinator/dist/main.bundle.js", "coordinator ready"],
    ["tool worker", "apps/tool-worker/dist/main.bundle.js", "tool worker ready"],
  ])(
    "give tool files outside the repo the %s's own @yiem/core, from ESM and CommonJS",
    async (_name, entry, ready) => {
      expect(await readyTools(entry, ready, writeToolFolder())).toEqual(
        expect.arrayContaining(["esm_true_yiem", "cjs_true_yiem", "getTime"]),
      );
    },
  );

  it("load a tool whose helper in a folder beside it imports @yiem/core, with no node_modules", async () => {
    const tools = await readyTools(
      "apps/coordinator/dist/main.bundle.js",
      "coordinator ready",
      writeFolder(HELPER_TOOL_FILES),
    );
    expect(tools).toEqual(expect.arrayContaining(["helper_yiem"]));
  });

  it("run the coordinator's threads from their own bundles beside the app's, loading no module of ioredis", async () => {
    // NODE_DEBUG=module: Node's CommonJS loader names each file it loads, in every thread.
    const app = spawnCommand(
      ["node", "apps/coordinator/dist/main.bundle.js"],
      await appEnv({ NODE_DEBUG: "module" }),
    );
    try {
      await app.waitForLine(logMessage("coordinator ready"), 30_000);
      // The heartbeat thread starts within a second of the start (`BEAT_THREAD_START_MS`).
      await app.waitForLine((line) => /: load ".*aliveBeatThread\.bundle\.cjs"/.test(line), 10_000);
      const loads = app.lines.filter((line) => /^MODULE \d+: load /.test(line));
      const threadFiles = loads.flatMap(
        (line) => /\/(\w+Thread\.bundle\.cjs)"/.exec(line)?.[1] ?? [],
      );
      expect(threadFiles.sort()).toEqual([
        "aliveBeatThread.bundle.cjs",
        "frontDoorThread.bundle.cjs",
      ]);
      expect(loads.filter((line) => /ioredis|Thread\.js"/.test(line))).toEqual([]);
    } finally {
      app.signal("SIGTERM");
      expect(await app.exited).toBe(0);
    }
  });

  it.each([
    ["coordinator", "apps/coordinator/dist/main.bundle.js", "coordinator ready"],
    ["tool worker", "apps/tool-worker/dist/main.bundle.js", "tool worker ready"],
  ])(
    "start the %s without loading OpenTelemetry (tracing off) or msgpackr's native extractor",
    async (_name, entry, ready) => {
      const app = spawnCommand(["node", entry], await appEnv({ NODE_DEBUG: "module" }));
      try {
        await app.waitForLine(logMessage(ready), 30_000);
        // Past the start: the heartbeat thread loads within a second of it.
        await app.waitForLine(
          (line) => /: load ".*aliveBeatThread\.bundle\.cjs"/.test(line),
          10_000,
        );
        const loads = app.lines.filter((line) => /^MODULE \d+: load /.test(line));
        expect(loads.length).toBeGreaterThan(0); // NODE_DEBUG=module names the loads
        expect(loads.filter((line) => /@opentelemetry|msgpackr-extract/.test(line))).toEqual([]);
      } finally {
        app.signal("SIGTERM");
        expect(await app.exited).toBe(0);
      }
    },
  );

  it("stop cleanly on a SIGTERM sent as soon as their ready line is read (each of 8 starts)", async () => {
    // The handler was set after the ready line: about one stop in five died of the signal.
    for (let i = 0; i < 8; i++) {
      const app = spawnCommand(["node", "apps/coordinator/dist/main.bundle.js"], await appEnv());
      await app.waitForLine(logMessage("coordinator ready"), 30_000);
      app.signal("SIGTERM");
      expect(await app.exited).toBe(0);
    }
  }, 120_000); // eight starts one after another, each given 30 s for its ready line
});
