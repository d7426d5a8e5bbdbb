import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTools, loadTools, ToolStore } from "@yiem/core";
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
    expect(byFile["c_noGetTool.mjs"]).toMatch(/does not export a getTool/);
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
