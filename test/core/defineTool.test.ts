import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type AgentTool,
  type AgentToolCall,
  defineTool,
  executeToolCalls,
  getTools,
  loadTools,
  ToolStore,
  validateRequiredArgs,
} from "@yiem/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { repoRoot } from "../support/processes.js";
import {
  assistantWith,
  configFor,
  contextWith,
  firstText,
  makeCall,
  recordEvents,
} from "../support/toolFixtures.js";

/** Runs `calls` through the real batch pipeline (prepare → execute → finalize). */
async function runCalls(tools: AgentTool[], calls: AgentToolCall[], overrides = {}) {
  const context = contextWith(tools);
  const recorder = recordEvents();
  const batch = await executeToolCalls(
    context,
    assistantWith(calls),
    calls,
    configFor(context, overrides),
    undefined,
    recorder.emit,
  );
  return batch.messages;
}

/** A zod tool whose `days` has a default and whose city may not be "Atlantis" (a refinement). */
function zodWeather(seen: unknown[] = []): AgentTool {
  return defineTool({
    name: "getWeather",
    description: "Weather in a city",
    parameters: z
      .object({
        city: z
          .string()
          .min(1)
          .transform((city) => city.toUpperCase()),
        days: z.number().int().max(7).default(1),
      })
      .refine((args) => args.city !== "ATLANTIS", {
        message: "is not a real city",
        path: ["city"],
      }),
    execute: (args) => {
      seen.push(args);
      return `${args.city} for ${args.days} day(s)`;
    },
  });
}

const timeSchema = {
  type: "object",
  properties: { timezone: { type: "string", minLength: 1 }, hour12: { type: "boolean" } },
  required: ["timezone"],
  additionalProperties: false,
} as const;

/** A JSON Schema tool that answers with `{ content }` and no `details`. */
function jsonTime(): AgentTool {
  return defineTool({
    name: "getTime",
    description: "The time in a zone",
    parameters: timeSchema,
    execute: ({ timezone, hour12 }) => ({
      content: [{ type: "text", text: `${timezone}${hour12 ? " (12h)" : ""}` }],
    }),
  });
}

describe("defineTool with a zod schema, through the real lifecycle", () => {
  it("runs valid arguments with the schema's validated value: transforms and defaults applied", async () => {
    const seen: unknown[] = [];
    const [message] = await runCalls(
      [zodWeather(seen)],
      [makeCall("c1", "getWeather", { city: "Tokyo" })],
    );
    expect(message?.isError).toBe(false);
    expect(firstText(message ?? { content: [] })).toBe("TOKYO for 1 day(s)");
    expect(message?.details).toEqual({});
    expect(seen).toEqual([{ city: "TOKYO", days: 1 }]);
  });

  it("turns invalid arguments into an error result naming each field, and never runs the tool", async () => {
    const seen: unknown[] = [];
    const messages = await runCalls(
      [zodWeather(seen)],
      [makeCall("c1", "getWeather", { city: 3, days: 9 })],
    );
    expect(messages[0]?.isError).toBe(true);
    const text = firstText(messages[0] ?? { content: [] });
    expect(text).toMatch(/^getWeather: invalid arguments: "city" .*; "days" /);
    expect(seen).toEqual([]);
  });

  it("turns a refinement failure into an error result naming its field", async () => {
    const messages = await runCalls(
      [zodWeather()],
      [makeCall("c1", "getWeather", { city: "Atlantis" })],
    );
    expect(messages[0]?.isError).toBe(true);
    expect(firstText(messages[0] ?? { content: [] })).toBe(
      'getWeather: invalid arguments: "city" is not a real city',
    );
  });

  it("gives the model the schema's input side as JSON Schema that ajv compiles, without $schema", () => {
    const tool = zodWeather();
    expect(tool.label).toBe("getWeather");
    expect(tool.inputSchema).not.toHaveProperty("$schema");
    expect(tool.inputSchema).toMatchObject({
      type: "object",
      properties: { city: { type: "string", minLength: 1 }, days: { type: "integer", default: 1 } },
      required: ["city"],
    });
    expect(validateRequiredArgs({ city: "Tokyo" }, tool.inputSchema)).toBeUndefined();
    expect(validateRequiredArgs({}, tool.inputSchema)).toBe(
      'invalid arguments: "city" is required',
    );
  });

  it("still checks the arguments when execute is called directly, as a worker does", async () => {
    const tool = zodWeather();
    await expect(tool.execute("c1", { city: "" }, undefined, () => {})).rejects.toThrow(
      /^getWeather: invalid arguments: "city" /,
    );
  });

  it("validates an asynchronous refinement when the call runs", async () => {
    const tool = defineTool({
      name: "lookUp",
      description: "Looks a key up",
      parameters: z.object({ key: z.string() }).refine(async (args) => args.key !== "taken", {
        message: "is taken",
        path: ["key"],
      }),
      execute: ({ key }) => `found ${key}`,
    });
    const messages = await runCalls(
      [tool],
      [makeCall("c1", "lookUp", { key: "free" }), makeCall("c2", "lookUp", { key: "taken" })],
    );
    expect(messages.map((m) => [m.isError, firstText(m)])).toEqual([
      [false, "found free"],
      [true, 'lookUp: invalid arguments: "key" is taken'],
    ]);
  });

  it("turns a schema that throws into that call's error result, leaving no rejection unhandled (issue 34, finding 1)", async () => {
    // zod answers a synchronous parse that threw (here a refinement; in the attack a stack
    // overflow on deep arguments) by parsing again asynchronously: a rejected promise.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const tool = defineTool({
        name: "fragile",
        description: "Its schema throws on one value",
        parameters: z.object({ key: z.string() }).refine((args) => {
          if (args.key === "boom") throw new RangeError("Maximum call stack size exceeded");
          return true;
        }),
        execute: ({ key }) => `ran ${key}`,
      });
      const messages = await runCalls(
        [tool],
        [makeCall("c1", "fragile", { key: "boom" }), makeCall("c2", "fragile", { key: "fine" })],
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(messages.map((m) => [m.isError, firstText(m)])).toEqual([
        [
          true,
          "fragile: invalid arguments: could not be validated (Maximum call stack size exceeded)",
        ],
        [false, "ran fine"],
      ]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("refuses at definition a schema that JSON Schema cannot describe, naming the tool", () => {
    const define = () =>
      defineTool({
        name: "when",
        description: "d",
        parameters: z.object({ at: z.date() }),
        execute: ({ at }) => at.toISOString(),
      });
    expect(define).toThrow(/^defineTool "when": parameters cannot be written as JSON Schema: /);
  });
});

describe("defineTool with a Standard Schema of another library", () => {
  /** A hand-written Standard Schema + Standard JSON Schema: a positive `n`, doubled. */
  const doubled = {
    "~standard": {
      version: 1 as const,
      vendor: "handmade",
      validate: (value: unknown) => {
        const n = (value as { n?: unknown }).n;
        if (typeof n === "number" && n > 0) return { value: { n: n * 2 } };
        return { issues: [{ message: "must be a positive number", path: [{ key: "n" }] }] };
      },
      jsonSchema: {
        input: (options: { target: string }) => ({
          $schema: `urn:${options.target}`,
          type: "object",
          properties: { n: { type: "number", exclusiveMinimum: 0 } },
          required: ["n"],
        }),
        output: () => ({ type: "object" }),
      },
      types: undefined as unknown as { input: { n: number }; output: { n: number } },
    },
  };

  it("asks for draft-07, validates with the schema's own validate and hands execute its value", async () => {
    const tool = defineTool({
      name: "double",
      description: "Doubles n",
      parameters: doubled,
      execute: ({ n }) => String(n),
    });
    expect(tool.inputSchema).toEqual({
      type: "object",
      properties: { n: { type: "number", exclusiveMinimum: 0 } },
      required: ["n"],
    });
    const messages = await runCalls(
      [tool],
      [makeCall("c1", "double", { n: 21 }), makeCall("c2", "double", { n: -1 })],
    );
    expect(messages.map((m) => [m.isError, firstText(m)])).toEqual([
      [false, "42"],
      [true, 'double: invalid arguments: "n" must be a positive number'],
    ]);
  });
});

describe("defineTool with a JSON Schema, through the real lifecycle", () => {
  it("runs valid arguments and fills in label and details", async () => {
    const tool = jsonTime();
    expect(tool.label).toBe("getTime");
    expect(tool.inputSchema).toBe(timeSchema);
    const [message] = await runCalls(
      [tool],
      [makeCall("c1", "getTime", { timezone: "UTC", hour12: true })],
    );
    expect(message?.isError).toBe(false);
    expect(firstText(message ?? { content: [] })).toBe("UTC (12h)");
    expect(message?.details).toEqual({});
  });

  it("turns invalid arguments into an ajv error result naming the field", async () => {
    const messages = await runCalls(
      [jsonTime()],
      [
        makeCall("c1", "getTime", { timzone: "UTC" }),
        makeCall("c2", "getTime", { timezone: "UTC", hour12: "yes" }),
      ],
    );
    expect(messages.map((m) => [m.isError, firstText(m)])).toEqual([
      [
        true,
        'getTime: invalid arguments: "timezone" is required; "timzone" is not an allowed property',
      ],
      [true, 'getTime: invalid arguments: "hour12" must be boolean'],
    ]);
  });

  it("refuses at definition a schema ajv cannot compile, or one that is not an object", () => {
    const bad = (parameters: Record<string, unknown>) => () =>
      defineTool({ name: "bad", description: "d", parameters, execute: () => "" });
    expect(bad({ type: "object", properties: { a: { type: "strng" } } })).toThrow(
      /^defineTool "bad": the tool's input schema is invalid: /,
    );
    expect(bad({ type: "string" })).toThrow('defineTool "bad": parameters must describe an object');
  });
});

describe("defineTool keeps every AgentTool field working", () => {
  it("runs prepareArguments before validation and its own validateRequiredArgs before the schema's", async () => {
    const tool = defineTool({
      name: "greet",
      label: "Greeter",
      description: "Greets",
      parameters: z.object({ name: z.string().min(2) }),
      prepareArguments: (args) => ({ name: String(args.name ?? "").trim() }),
      validateRequiredArgs: (args) =>
        args.name === "root" ? "root may not be greeted" : undefined,
      execute: ({ name }, { toolCallId }) => ({
        content: [{ type: "text", text: `hello ${name}` }],
        details: { toolCallId },
      }),
    });
    expect(tool.label).toBe("Greeter");
    const messages = await runCalls(
      [tool],
      [
        makeCall("c1", "greet", { name: "  Ada " }),
        makeCall("c2", "greet", { name: "root" }),
        makeCall("c3", "greet", { name: " A " }),
      ],
    );
    expect(messages.map((m) => [m.isError, firstText(m), m.details])).toEqual([
      [false, "hello Ada", { toolCallId: "c1" }],
      [true, "greet: root may not be greeted", {}],
      [true, expect.stringMatching(/^greet: invalid arguments: "name" /), {}],
    ]);
  });

  it("passes the lifecycle and cluster fields through unchanged", () => {
    const fields = {
      parallelToolExecute: true,
      queue: "slow.io",
      retries: 2,
      idempotent: true,
      approval: "always",
      approvalTimeoutMs: 5000,
      concurrency: 3,
      rateLimit: { max: 5, durationMs: 1000 },
      timeoutMs: 250,
    } as const;
    const tool = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: { type: "object", properties: {} } as const,
      execute: () => "deployed",
      ...fields,
    });
    expect(tool).toMatchObject(fields);
  });

  it("times out a slow defined tool after its timeoutMs, firing the signal it was given", async () => {
    let sawSignal: AbortSignal | undefined;
    const tool = defineTool({
      name: "slow",
      description: "Never answers",
      parameters: z.object({}),
      timeoutMs: 20,
      execute: (_args, { signal }) => {
        sawSignal = signal;
        return new Promise<string>(() => {});
      },
    });
    const messages = await runCalls([tool], [makeCall("c1", "slow")]);
    expect(firstText(messages[0] ?? { content: [] })).toBe("slow timed out after 20 ms");
    expect(sawSignal?.aborted).toBe(true);
  });

  it("turns an execute that returns neither text nor { content } into an error result", async () => {
    const tool = defineTool({
      name: "sloppy",
      description: "Returns nothing",
      parameters: { type: "object" } as const,
      execute: (() => undefined) as unknown as () => string,
    });
    const messages = await runCalls([tool], [makeCall("c1", "sloppy")]);
    expect(messages[0]?.isError).toBe(true);
    expect(firstText(messages[0] ?? { content: [] })).toBe(
      "sloppy: execute must return a string or { content: [...] }",
    );
  });

  it("refuses at definition a name a tool file could not have", () => {
    const define = () =>
      defineTool({ name: "a:b", description: "d", parameters: z.object({}), execute: () => "" });
    expect(define).toThrow(/^defineTool "a:b": tool.name "a:b" must match/);
  });
});

describe("defineTool in a tool file", () => {
  it("loads a tool file whose getTool() returns defineTool(…) with a zod schema, and runs it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "yiem-define-tool-"));
    try {
      const core = pathToFileURL(join(repoRoot, "packages/core/dist/index.js")).href;
      const zod = pathToFileURL(createRequire(import.meta.url).resolve("zod")).href;
      await writeFile(
        join(dir, "shout.mjs"),
        `import { defineTool } from ${JSON.stringify(core)};
         import { z } from ${JSON.stringify(zod)};
         export function getTool() {
           return defineTool({ name: "shout", description: "Shouts",
             parameters: z.object({ text: z.string() }), execute: ({ text }) => text.toUpperCase() });
         }`,
      );
      const store = new ToolStore({ name: "agent" });
      const result = await loadTools(store, dir);
      expect(result.failures).toEqual([]);
      const shout = getTools(store).get("shout");
      expect(shout?.label).toBe("shout");
      const messages = await runCalls(shout ? [shout] : [], [
        makeCall("c1", "shout", { text: "hi" }),
        makeCall("c2", "shout", { text: 1 }),
      ]);
      expect(messages.map((m) => [m.isError, firstText(m)])).toEqual([
        [false, "HI"],
        [true, expect.stringMatching(/^shout: invalid arguments: "text" /)],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
