/**
 * `YIEM_AGENTS` files as the coordinator reads them (`loadAgentsFile`): YAML and JSON data
 * files, a module exporting `defineAgent` definitions (instructions as a function of the
 * session), and the errors that name the file, the agent and the field.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgentsFileError, loadAgentsFile, startCoordinator, ToolStore } from "@yiem/core";
import { describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "yiem-agents-file-"));

/** Writes `text` to `name` in the test folder and returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The error `loadAgentsFile(path)` throws. */
async function failureOf(path: string): Promise<Error> {
  return loadAgentsFile(path).then(
    () => {
      throw new Error("loaded");
    },
    (err: Error) => err,
  );
}

describe("an agents file", () => {
  it("reads YAML agents with their settings, tools and reserved fields", async () => {
    const path = file(
      "agents.yaml",
      [
        "agents:",
        "  support:",
        "    instructions: Help.",
        "    model: gpt-4o-mini",
        "    modelSettings: { temperature: 0.2, maxTokens: 800 }",
        "    apiKeyEnv: SUPPORT_OPENAI_KEY",
        "    tools: [getTime, orders__lookup]",
        "    maxTurns: 20",
        "    outputRetries: 2",
        "    budget: { maxTokens: 10000 }",
      ].join("\n"),
    );
    expect(await loadAgentsFile(path)).toEqual([
      {
        name: "support",
        instructions: "Help.",
        model: "gpt-4o-mini",
        modelSettings: { temperature: 0.2, maxTokens: 800 },
        apiKeyEnv: "SUPPORT_OPENAI_KEY",
        tools: ["getTime", "orders__lookup"],
        maxTurns: 20,
        outputRetries: 2,
        budget: { maxTokens: 10000 },
      },
    ]);
  });

  it("reads each agent's description and handoffs", async () => {
    const path = file(
      "handoffs.yaml",
      [
        "agents:",
        "  support:",
        "    instructions: Help.",
        "    model: m",
        "    handoffs: [billing]",
        "  billing:",
        "    instructions: Bill.",
        "    description: Handles invoices.",
        "    model: m",
      ].join("\n"),
    );
    const [support, billing] = await loadAgentsFile(path);
    expect(support).toMatchObject({ name: "support", handoffs: ["billing"] });
    expect(billing).toMatchObject({ name: "billing", description: "Handles invoices." });
  });

  it("reads a module's defineAgent definitions, instructions as a function of the session", async () => {
    const path = fileURLToPath(new URL("../support/agentsModule.ts", import.meta.url));
    const [ops] = await loadAgentsFile(path);
    expect(ops).toMatchObject({ name: "ops", model: "ops-model", tools: ["getTime"] });
    const instructions = ops?.instructions;
    expect(typeof instructions === "function" && instructions({ sessionId: "s-1" })).toBe(
      "ops for s-1",
    );
  });

  it("is refused naming the file, the agent and the field", async () => {
    const cases: Array<[string, string, string]> = [
      [
        "missing-model.json",
        '{"agents":{"a":{"instructions":"x"}}}',
        'agent "a": model: is required',
      ],
      [
        "bad-setting.yaml",
        "agents:\n  b:\n    instructions: x\n    model: m\n    modelSettings: { temperature: hot }",
        'agent "b": modelSettings.temperature: must be a number',
      ],
      [
        "unknown-field.json",
        '{"agents":{"c":{"instructions":"x","model":"m","tool":["getTime"]}}}',
        'agent "c": tool: unknown field',
      ],
      [
        "bad-tools.json",
        '{"agents":{"d":{"instructions":"x","model":"m","tools":"getTime"}}}',
        'agent "d": tools: must be a list of tool names',
      ],
      [
        "bad-name.json",
        '{"agents":{"no spaces":{"instructions":"x","model":"m"}}}',
        'agent "no spaces": name:',
      ],
      [
        "bad-handoffs.json",
        '{"agents":{"e":{"instructions":"x","model":"m","handoffs":"billing"}}}',
        'agent "e": handoffs: must be a list of agent names',
      ],
      [
        "self-handoff.json",
        '{"agents":{"f":{"instructions":"x","model":"m","handoffs":["f"]}}}',
        'agent "f": handoffs: must not name the agent itself',
      ],
      [
        "blank-description.json",
        '{"agents":{"g":{"instructions":"x","model":"m","description":" "}}}',
        'agent "g": description: must be a non-empty string',
      ],
      [
        "bad-agents.json",
        '{"agents":{"e":{"instructions":"x","model":"m","agents":["no spaces"]}}}',
        'agent "e": agents: must be a list of agent names',
      ],
      [
        "bad-input-schema.json",
        '{"agents":{"f":{"instructions":"x","model":"m","inputSchema":"text"}}}',
        'agent "f": inputSchema: must be a JSON Schema object',
      ],
      ["no-agents.json", '{"agent":{}}', 'must hold { "agents"'],
      ["broken.yaml", "agents: [\n", ""],
    ];
    for (const [name, text, reason] of cases) {
      const path = file(name, text);
      const err = await failureOf(path);
      expect(err).toBeInstanceOf(AgentsFileError);
      expect(err.message).toContain(`${path}: ${reason}`);
    }
  });

  it("reads the agents an agent may call, and a coordinator refuses to start when one is not defined", async () => {
    const path = file(
      "callers.yaml",
      [
        "agents:",
        "  lead:",
        "    instructions: Lead.",
        "    model: m",
        "    agents: [helper, ghost]",
        "  helper:",
        "    description: Helps.",
        "    instructions: Help.",
        "    model: m",
        "    inputSchema: { type: object, properties: { topic: { type: string } } }",
      ].join("\n"),
    );
    const agents = await loadAgentsFile(path);
    expect(agents[0]?.agents).toEqual(["helper", "ghost"]);
    expect(agents[1]).toMatchObject({ description: "Helps.", inputSchema: { type: "object" } });
    const start = startCoordinator({
      redis: "redis://127.0.0.1:1",
      agents,
      toolStore: new ToolStore({ name: "test" }),
    });
    await expect(start).rejects.toThrow(
      'agent "lead": agents: unknown agent "ghost" (known: helper, lead)',
    );
  });
});
