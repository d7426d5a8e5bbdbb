import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentTool } from "@yiem/core";
import { builtinToolsDir, getBuiltinTools } from "@yiem/tools";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";

/** The exports a lifecycle §17 tool file may have. */
interface ToolModule {
  getTool: () => AgentTool;
  executeTool?: unknown;
  prepareArguments?: unknown;
  validateRequiredArgs?: unknown;
}

const toolFiles = readdirSync(builtinToolsDir)
  .filter((name) => name.endsWith(".ts"))
  .sort();

/** Checks the fields every tool must have and the shape of its schema. */
function expectValidTool(tool: AgentTool): void {
  for (const field of ["name", "label", "description"] as const) {
    expect(typeof tool[field]).toBe("string");
    expect(tool[field].length).toBeGreaterThan(0);
  }
  expect(typeof tool.execute).toBe("function");
  const schema = tool.inputSchema as {
    type: string;
    properties: Record<string, { description?: string }>;
    required: string[];
  };
  expect(schema.type).toBe("object");
  for (const [name, property] of Object.entries(schema.properties)) {
    expect(property.description, `${tool.name}.${name} has a description`).toBeTruthy();
  }
  for (const name of schema.required) expect(Object.keys(schema.properties)).toContain(name);
  expect(() => new Ajv({ strict: true }).compile(schema)).not.toThrow();
}

describe("lifecycle §17 tool-file contract: built-in tool files", () => {
  it("builtinToolsDir is the absolute folder of exactly the three tool files", () => {
    expect(builtinToolsDir.startsWith("/")).toBe(true);
    expect(toolFiles).toEqual(["getTime.ts", "getWeather.ts", "httpFetch.ts"]);
  });

  it.each(toolFiles)(
    "%s exports getTool() returning a valid tool wired to its exports",
    async (file) => {
      const mod = (await import(join(builtinToolsDir, file))) as ToolModule;
      expect(typeof mod.getTool).toBe("function");
      const tool = mod.getTool();
      expectValidTool(tool);
      expect(`${tool.name}.ts`).toBe(file);
      expect(tool.execute).toBe(mod.executeTool);
      expect(tool.prepareArguments).toBe(mod.prepareArguments);
      expect(tool.validateRequiredArgs).toBe(mod.validateRequiredArgs);
      expect(tool.parallelToolExecute).toBe(true);
      expect(tool.idempotent).toBe(true);
    },
  );

  it("getBuiltinTools returns fresh instances of getTime, getWeather and httpFetch", () => {
    const tools = getBuiltinTools();
    expect(tools.map((tool) => tool.name)).toEqual(["getTime", "getWeather", "httpFetch"]);
    for (const tool of tools) expectValidTool(tool);
    expect(getBuiltinTools()[0]).not.toBe(tools[0]);
  });
});

describe("lifecycle §17 tool-file contract: validateRequiredArgs agrees with inputSchema", () => {
  const samples: Record<string, Array<Record<string, unknown>>> = {
    getTime: [{ timezone: "UTC" }, {}, { timezone: 9 }, { timezone: "" }],
    getWeather: [
      { city: "Tokyo" },
      { city: "Tokyo", latitude: 35.7, longitude: 139.7 },
      {},
      { city: "Tokyo", latitude: 95, longitude: 0 },
      { city: "Tokyo", latitude: "north", longitude: 0 },
    ],
    httpFetch: [
      { url: "https://example.com/" },
      { url: "http://example.com/", maxBytes: 10, timeoutMs: 50 },
      { url: "ftp://example.com/" },
      { url: "https://example.com/", maxBytes: 0 },
      { url: "https://example.com/", maxBytes: 1.5 },
      { url: "https://example.com/", timeoutMs: 120_001 },
      {},
    ],
  };

  it.each(getBuiltinTools())("$name accepts and rejects what its schema does", (tool) => {
    const schemaAccepts = new Ajv().compile(tool.inputSchema);
    for (const args of samples[tool.name] ?? []) {
      const error = tool.validateRequiredArgs?.(args);
      expect(error === undefined, `${tool.name} ${JSON.stringify(args)}: ${error}`).toBe(
        schemaAccepts(args),
      );
    }
  });
});
