import { readClusterConfig, ToolStore } from "@yiem/core";
import { loadBuiltinAndExtraTools, registerBuiltinTools, selectBuiltinTools } from "@yiem/tools";
import { describe, expect, it } from "vitest";

describe("YIEM_BUILTIN_TOOLS chooses the built-in tools", () => {
  it("reads unset as the default, none as no tool, and a comma list as the names", () => {
    expect(readClusterConfig({}).builtinTools).toBeUndefined();
    expect(readClusterConfig({ YIEM_BUILTIN_TOOLS: " none " }).builtinTools).toEqual([]);
    expect(readClusterConfig({ YIEM_BUILTIN_TOOLS: "getTime, httpFetch" }).builtinTools).toEqual([
      "getTime",
      "httpFetch",
    ]);
    for (const bad of ["none,getTime", ","]) {
      expect(() => readClusterConfig({ YIEM_BUILTIN_TOOLS: bad })).toThrow(
        /YIEM_BUILTIN_TOOLS must be none or a comma list/,
      );
    }
    expect(
      readClusterConfig({ YIEM_HTTP_FETCH_ALLOW: "127.0.0.1/32, internal.example" }).httpFetchAllow,
    ).toEqual(["127.0.0.1/32", "internal.example"]);
  });

  it("leaves httpFetch out by default and keeps name order without repeats", () => {
    expect(selectBuiltinTools()).toEqual(["getTime", "getWeather"]);
    expect(selectBuiltinTools(["httpFetch", "getTime", "httpFetch"])).toEqual([
      "getTime",
      "httpFetch",
    ]);
    expect(selectBuiltinTools([])).toEqual([]);
    expect(() => selectBuiltinTools(["getTime", "curl"])).toThrow(
      'unknown built-in tool "curl" in YIEM_BUILTIN_TOOLS (use none, or a comma list of getTime, getWeather, httpFetch)',
    );
  });

  it("registers the chosen built-ins and listTools, and nothing when the choice is bad", async () => {
    const chosen = new ToolStore({ name: "chosen" });
    const result = registerBuiltinTools(chosen, { builtinTools: ["httpFetch"] });
    expect([...chosen.tools.keys()]).toEqual(["httpFetch", "listTools"]);
    expect(result.loaded.map((l) => l.path)).toEqual([
      expect.stringMatching(/tools\/httpFetch\.(ts|js)$/),
    ]);

    const byDefault = new ToolStore({ name: "default" });
    expect((await loadBuiltinAndExtraTools(byDefault)).failures).toEqual([]);
    expect([...byDefault.tools.keys()]).toEqual(["getTime", "getWeather", "listTools"]);

    const none = new ToolStore({ name: "none" });
    await loadBuiltinAndExtraTools(none, undefined, { builtinTools: [] });
    expect([...none.tools.keys()]).toEqual(["listTools"]);

    const bad = new ToolStore({ name: "bad" });
    expect(() => registerBuiltinTools(bad, { httpFetchAllow: ["300.1.2.3/8"] })).toThrow(
      /YIEM_HTTP_FETCH_ALLOW: "300\.1\.2\.3\/8"/,
    );
    expect(bad.tools.size).toBe(0);
  });
});
