import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTools, loadTools, registerTool, ToolStore } from "@yiem/core";
import { loadBuiltinAndExtraTools } from "@yiem/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const goodTool = (name: string) => `
export function executeTool(id, args) {
  return { content: [{ type: "text", text: "${name}:" + JSON.stringify(args) }], details: {} };
}
export function getTool() {
  return { name: "${name}", label: "${name}", description: "d", inputSchema: { type: "object" }, execute: executeTool };
}
`;

describe("lifecycle §4 and §17 loadTools", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "yiem-tools-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("loads files sorted by name, skips registry, .d.ts and test files, and registers listTools", async () => {
    await writeFile(join(dir, "zeta.mjs"), goodTool("zeta"));
    await writeFile(join(dir, "alpha.mjs"), goodTool("alpha"));
    await writeFile(join(dir, "toolRegistry.mjs"), goodTool("registryTool"));
    await writeFile(join(dir, "types.d.ts"), "export declare const x: number;");
    await writeFile(join(dir, "alpha.test.mjs"), goodTool("fromTest"));
    await writeFile(join(dir, "notes.txt"), "not a tool");
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect([...getTools(store).keys()]).toEqual(["alpha", "zeta", "listTools"]);
    expect(result.failures).toEqual([]);
    expect(result.loaded.map((entry) => entry.toolName)).toEqual(["alpha", "zeta"]);
    expect(result.skipped).toEqual([
      { path: join(dir, "alpha.test.mjs"), reason: "testFile" },
      { path: join(dir, "notes.txt"), reason: "otherExtension" },
      { path: join(dir, "toolRegistry.mjs"), reason: "registryFile" },
      { path: join(dir, "types.d.ts"), reason: "typeDeclarations" },
    ]);
  });

  it("loads .ts, .mts, .js, .mjs and .cjs files, by getTool(), a default tool or a default function", async () => {
    const fields = (name: string) =>
      `name: "${name}", label: "L", description: "d", inputSchema: { type: "object" }, execute: () => ({ content: [{ type: "text", text: "${name} ran" }], details: {} })`;
    await writeFile(
      join(dir, "a.ts"),
      `const n: string = "x"; export default { ${fields("fromTs")} };`,
    );
    await writeFile(join(dir, "b.mts"), `export default (): object => ({ ${fields("fromMts")} });`);
    await writeFile(
      join(dir, "c.js"),
      `module.exports = { getTool: () => ({ ${fields("fromJs")} }) };`,
    );
    await writeFile(join(dir, "d.mjs"), `export default async () => ({ ${fields("fromMjs")} });`);
    await writeFile(join(dir, "e.cjs"), `module.exports = { ${fields("fromCjs")} };`);
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect(result.failures).toEqual([]);
    expect([...getTools(store).keys()]).toEqual([
      "fromTs",
      "fromMts",
      "fromJs",
      "fromMjs",
      "fromCjs",
      "listTools",
    ]);
    const ran = await getTools(store)
      .get("fromCjs")
      ?.execute("c", {}, undefined, () => {});
    expect(ran?.content[0]).toEqual({ type: "text", text: "fromCjs ran" });
  });

  it("loads a tool folder outside the repo that has its own node_modules and imports @yiem/core", async () => {
    const shout = join(dir, "node_modules", "shout");
    await mkdir(shout, { recursive: true });
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ name: "my-tools", private: true, type: "module" }),
    );
    await writeFile(
      join(shout, "package.json"),
      JSON.stringify({ name: "shout", main: "index.js" }),
    );
    await writeFile(join(shout, "index.js"), "module.exports = (s) => s.toUpperCase() + '!';");
    const tool = (name: string) => `
      import { DEFAULTS, ToolStore } from "@yiem/core";
      import shout from "shout";
      export function getTool() {
        return { name: "${name}", label: "L", description: "d", inputSchema: { type: "object" },
          execute: () => ({ content: [{ type: "text", text: shout(DEFAULTS.prefix) + new ToolStore({ name: "n" }).name }], details: {} }) };
      }`;
    await writeFile(join(dir, "typed.ts"), tool("fromTs"));
    await writeFile(join(dir, "typed2.mts"), tool("fromMts"));
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect(result.failures).toEqual([]);
    for (const name of ["fromTs", "fromMts"]) {
      const ran = await getTools(store)
        .get(name)
        ?.execute("c", {}, undefined, () => {});
      expect(ran?.content[0]).toEqual({ type: "text", text: "YIEM!n" });
    }
  });

  it("names file, line and column of a syntax error in a .ts and a .js file, and of a missing import", async () => {
    await writeFile(
      join(dir, "a.ts"),
      "const a: number = 1;\nexport function getTool(: string {\n",
    );
    await writeFile(
      join(dir, "b.mjs"),
      "const b = 1;\n\nexport function getTool() { return {; }\n",
    );
    await writeFile(join(dir, "c.mjs"), "const c = 1;\n  import x from 'no-such-package-here';\n");
    const result = await loadTools(new ToolStore({ name: "agent" }), dir);
    expect(result.failures.map((f) => f.error)).toEqual([
      expect.stringMatching(
        new RegExp(`^failed to load ${join(dir, "a.ts")}:2:25: syntax error: `),
      ),
      expect.stringMatching(
        new RegExp(`^failed to load ${join(dir, "b.mjs")}:3:37: syntax error: `),
      ),
      expect.stringMatching(
        new RegExp(`^failed to load ${join(dir, "c.mjs")}:2:17: .*no-such-package-here`),
      ),
    ]);
  });

  it("refuses a second tool of a name, a built-in included, naming both files, unless it overrides", async () => {
    const named = (name: string, extra = "") =>
      `export function getTool() { return { name: "${name}", label: "L", description: "d", inputSchema: { type: "object" }, ${extra} execute: () => ({ content: [{ type: "text", text: "mine" }], details: {} }) }; }`;
    await writeFile(join(dir, "a_getTime.mjs"), named("getTime"));
    await writeFile(join(dir, "b_echo.mjs"), named("echo"));
    await writeFile(join(dir, "c_echo.mjs"), named("echo"));
    await writeFile(join(dir, "d_getWeather.mjs"), named("getWeather", "overrides: true,"));
    const store = new ToolStore({ name: "agent" });
    const result = await loadBuiltinAndExtraTools(store, dir);
    const builtinGetTime = result.loaded.find((entry) => entry.toolName === "getTime")?.path;
    expect(builtinGetTime).toMatch(/packages\/tools\/(src|dist)\/tools\/getTime\.[jt]s$/);
    expect(result.failures).toEqual([
      {
        path: join(dir, "a_getTime.mjs"),
        error: `tool "getTime" is already loaded from ${builtinGetTime}; ${join(dir, "a_getTime.mjs")} defines it again (set overrides: true on it to replace the first)`,
      },
      {
        path: join(dir, "c_echo.mjs"),
        error: expect.stringContaining(`already loaded from ${join(dir, "b_echo.mjs")}`),
      },
    ]);
    const weather = await getTools(store)
      .get("getWeather")
      ?.execute("c", {}, undefined, () => {});
    expect(weather?.content[0]).toEqual({ type: "text", text: "mine" });
    const echo = getTools(store).get("echo");
    if (echo) registerTool(store, { ...echo, name: "coded" });
    await writeFile(join(dir, "e_coded.mjs"), named("coded"));
    const again = await loadTools(store, dir);
    expect(again.failures.at(-1)?.error).toMatch(
      /"coded" is already loaded from code \(registerTool\)/,
    );
  });

  it("refuses an input schema ajv cannot compile, with ajv's message", async () => {
    await writeFile(
      join(dir, "bad.mjs"),
      `export default { name: "bad", label: "L", description: "d", inputSchema: { type: "objekt" }, execute: () => ({ content: [], details: {} }) };`,
    );
    const result = await loadTools(new ToolStore({ name: "agent" }), dir);
    expect(result.failures).toEqual([
      {
        path: join(dir, "bad.mjs"),
        error: expect.stringMatching(
          /^the tool's input schema is invalid: schema is invalid: data\/type must be/,
        ),
      },
    ]);
  });

  it("loads TypeScript tool files", async () => {
    await writeFile(
      join(dir, "typed.ts"),
      `import type { AgentTool } from "@yiem/core";
       export function getTool(): AgentTool {
         return { name: "typed", label: "Typed", description: "d", inputSchema: { type: "object" },
           execute: () => ({ content: [{ type: "text", text: "typed ran" }], details: {} }) };
       }`,
    );
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect(result.failures).toEqual([]);
    expect(getTools(store).has("typed")).toBe(true);
  });

  it("reports each bad file with its path and still loads the others", async () => {
    await writeFile(join(dir, "a_good.mjs"), goodTool("good"));
    await writeFile(join(dir, "b_syntax.mjs"), "export function getTool( {");
    await writeFile(join(dir, "c_noGetTool.mjs"), "export const x = 1;");
    await writeFile(
      join(dir, "d_throws.mjs"),
      "export function getTool() { throw new Error('boom'); }",
    );
    await writeFile(
      join(dir, "e_invalid.mjs"),
      "export function getTool() { return { name: 'x' }; }",
    );
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect([...getTools(store).keys()]).toEqual(["good", "listTools"]);
    const byFile = Object.fromEntries(
      result.failures.map((f) => [f.path.split("/").pop(), f.error]),
    );
    expect(Object.keys(byFile)).toEqual([
      "b_syntax.mjs",
      "c_noGetTool.mjs",
      "d_throws.mjs",
      "e_invalid.mjs",
    ]);
    expect(byFile["b_syntax.mjs"]).toMatch(/failed to load/);
    expect(byFile["c_noGetTool.mjs"]).toMatch(
      /does not export a getTool\(\) function or a default tool/,
    );
    expect(byFile["d_throws.mjs"]).toMatch(/getTool\(\) threw: boom/);
    expect(byFile["e_invalid.mjs"]).toMatch(/tool.label must be a non-empty string/);
    for (const failure of result.failures) expect(failure.path.startsWith(dir)).toBe(true);
  });

  it("refuses a limited tool whose name or queue would break queue names, naming the tool and the file", async () => {
    const limited = (fields: string) =>
      `export function getTool() { return { ${fields}, label: "L", description: "d", inputSchema: { type: "object" }, concurrency: 1, execute: () => ({ content: [], details: {} }) }; }`;
    await writeFile(join(dir, "a_good.mjs"), goodTool("good"));
    await writeFile(join(dir, "b_colon.mjs"), limited(`name: "search:web"`));
    await writeFile(join(dir, "c_queue.mjs"), limited(`name: "gpuJob", queue: "gpu:1"`));
    const store = new ToolStore({ name: "agent" });
    const result = await loadTools(store, dir);
    expect([...getTools(store).keys()]).toEqual(["good", "listTools"]);
    expect(result.failures.map((f) => [f.path, f.error])).toEqual([
      [join(dir, "b_colon.mjs"), expect.stringMatching(/^tool\.name "search:web" must match/)],
      [
        join(dir, "c_queue.mjs"),
        expect.stringMatching(/^tool\.queue "gpu:1" of tool "gpuJob" must match/),
      ],
    ]);
  });

  it("gives each file its own scope: same helper names in two files do not collide", async () => {
    const withHelper = (name: string) =>
      `function helper() { return "${name}"; }\n${goodTool(name).replace(`"${name}:"`, "helper() + ':'")}`;
    await writeFile(join(dir, "one.mjs"), withHelper("one"));
    await writeFile(join(dir, "two.mjs"), withHelper("two"));
    const store = new ToolStore({ name: "agent" });
    await loadTools(store, dir);
    const one = await getTools(store)
      .get("one")
      ?.execute("c", {}, undefined, () => {});
    const two = await getTools(store)
      .get("two")
      ?.execute("c", {}, undefined, () => {});
    expect(one?.content[0]).toEqual({ type: "text", text: "one:{}" });
    expect(two?.content[0]).toEqual({ type: "text", text: "two:{}" });
  });
});
