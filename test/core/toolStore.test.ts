import {
  clearTools,
  getTools,
  InvalidToolError,
  listTool,
  registerTool,
  ToolStore,
} from "@yiem/core";
import { describe, expect, it } from "vitest";
import { firstText, makeTool } from "../support/toolFixtures.js";

describe("lifecycle §4 tool stores", () => {
  it("counts every change in its revision, through registerTool or the map itself", () => {
    const store = new ToolStore({ name: "revised" });
    expect(store.revision).toBe(0);
    registerTool(store, makeTool("a"));
    const afterRegister = store.revision;
    expect(afterRegister).toBeGreaterThan(0);
    getTools(store).delete("missing"); // nothing removed: no change
    expect(store.revision).toBe(afterRegister);
    getTools(store).delete("a");
    expect(store.revision).toBeGreaterThan(afterRegister);
    const afterDelete = store.revision;
    clearTools(store);
    expect(store.revision).toBeGreaterThan(afterDelete);
  });

  it("keeps tools in registration order and replaces a same-named tool in place", () => {
    const store = new ToolStore({ name: "agent" });
    registerTool(store, makeTool("b"));
    registerTool(store, makeTool("a"));
    registerTool(store, makeTool("b", { label: "new b" }));
    expect([...getTools(store).keys()]).toEqual(["b", "a"]);
    expect(getTools(store).get("b")?.label).toBe("new b");
  });

  it("refuses, naming the tool, a name the OpenAI API would refuse or a queue that is no queue name, and keeps the store as it was", () => {
    const store = new ToolStore({ name: "agent" });
    registerTool(store, makeTool("ok_name-2", { concurrency: 1 }));
    const refused: Array<[string, Parameters<typeof makeTool>[1], RegExp]> = [
      [
        "a:b",
        { concurrency: 1 },
        /^tool "a:b" refused: tool\.name "a:b" must match \^\[a-zA-Z0-9_-\]\{1,64\}\$/,
      ],
      ["with space", {}, /tool "with space" refused/],
      ["x".repeat(65), {}, /must match/],
      ["", {}, /tool "" refused/],
      [
        "gpuTool",
        { queue: "gpu:1", concurrency: 2 },
        /^tool "gpuTool" refused: tool\.queue "gpu:1" of tool "gpuTool" must match/,
      ],
      ["braced", { queue: "{gpu}" }, /tool "braced" refused: tool\.queue/],
    ];
    for (const [name, extra, message] of refused) {
      const attempt = () => registerTool(store, makeTool(name, extra));
      expect(attempt, name).toThrow(InvalidToolError);
      expect(attempt, name).toThrow(message);
    }
    expect([...getTools(store).keys()]).toEqual(["ok_name-2"]);
  });

  it("returns the live map, so changes through it reach the store", () => {
    const store = new ToolStore({ name: "agent" });
    getTools(store).set("x", makeTool("x"));
    expect(store.tools.has("x")).toBe(true);
  });

  it("isolates stores: registering and clearing one leaves the other alone", () => {
    const storeA = new ToolStore({ name: "A" });
    const storeB = new ToolStore({ name: "B" });
    registerTool(storeA, makeTool("getTime"));
    registerTool(storeB, makeTool("getWeather"));
    expect([...getTools(storeA).keys()]).toEqual(["getTime"]);
    clearTools(storeA);
    expect(getTools(storeA).size).toBe(0);
    expect([...getTools(storeB).keys()]).toEqual(["getWeather"]);
  });
});

describe("lifecycle §1 step 1 listTools", () => {
  it("lists every tool of its own store as '- name: label — description', including later ones", async () => {
    const store = new ToolStore({ name: "agent" });
    registerTool(store, makeTool("getTime", { label: "Time Lookup", description: "Get the time" }));
    const tool = listTool(store);
    registerTool(store, tool);
    registerTool(store, makeTool("late", { label: "Late", description: "Added afterwards" }));
    const result = await tool.execute("call-1", {}, undefined, () => {});
    expect(firstText(result)).toBe(
      [
        "Available tools:",
        "- getTime: Time Lookup — Get the time",
        `- listTools: List Tools — ${tool.description}`,
        "- late: Late — Added afterwards",
      ].join("\n"),
    );
    const other = new ToolStore({ name: "other" });
    const otherResult = await listTool(other).execute("call-2", {}, undefined, () => {});
    expect(firstText(otherResult)).toBe("Available tools:\n");
  });
});
