/**
 * Compile-time behaviour of `defineTool` (vitest `typecheck`): `execute`'s arguments are
 * typed from a zod schema or an `as const` JSON Schema, so a misspelt or mistyped argument is
 * a type error. Each `@ts-expect-error` fails the check when its line compiles.
 */
import { type AgentTool, defineTool } from "@yiem/core";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";

const weather = z.object({
  city: z.string().min(1),
  days: z.number().int().default(1),
  units: z.enum(["metric", "imperial"]).optional(),
});

const timeSchema = {
  type: "object",
  properties: { timezone: { type: "string" }, hour12: { type: "boolean" } },
  required: ["timezone"],
  additionalProperties: false,
} as const;

describe("defineTool types a zod-defined tool's arguments", () => {
  it("gives execute the schema's output type", () => {
    defineTool({
      name: "getWeather",
      description: "Weather in a city",
      parameters: weather,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{
          city: string;
          days: number;
          units?: "metric" | "imperial" | undefined;
        }>();
        return `${args.city} ${args.days}`;
      },
    });
  });

  it("rejects a misspelt argument", () => {
    defineTool({
      name: "getWeather",
      description: "Weather in a city",
      parameters: weather,
      // @ts-expect-error `cty` is not an argument of the schema
      execute: ({ cty }) => String(cty),
    });
    defineTool({
      name: "getWeather",
      description: "Weather in a city",
      parameters: weather,
      execute: (args) => {
        // @ts-expect-error `cityy` is not an argument of the schema
        return String(args.cityy);
      },
    });
  });

  it("rejects using an argument as the wrong type", () => {
    defineTool({
      name: "getWeather",
      description: "Weather in a city",
      parameters: weather,
      execute: (args) => {
        // @ts-expect-error `days` is a number, not a string
        const days: string = args.days;
        return days;
      },
    });
  });
});

describe("defineTool types an as-const JSON Schema tool's arguments", () => {
  it("gives execute FromSchema's type", () => {
    defineTool({
      name: "getTime",
      description: "The time in a zone",
      parameters: timeSchema,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ timezone: string; hour12?: boolean }>();
        return args.timezone;
      },
    });
  });

  it("types an inline literal schema without `as const`", () => {
    defineTool({
      name: "getTime",
      description: "The time in a zone",
      parameters: {
        type: "object",
        properties: { timezone: { type: "string" } },
        required: ["timezone"],
      },
      execute: (args) => {
        expectTypeOf(args.timezone).toEqualTypeOf<string>();
        return args.timezone;
      },
    });
  });

  it("rejects a misspelt argument", () => {
    defineTool({
      name: "getTime",
      description: "The time in a zone",
      parameters: timeSchema,
      execute: (args) => {
        // @ts-expect-error `timzone` is not in the schema's properties
        return String(args.timzone);
      },
    });
  });

  it("rejects using an argument as the wrong type", () => {
    defineTool({
      name: "getTime",
      description: "The time in a zone",
      parameters: timeSchema,
      execute: (args) => {
        // @ts-expect-error `hour12` is a boolean, not a number
        const hour: number | undefined = args.hour12;
        return String(hour);
      },
    });
  });
});

describe("defineTool's definition and result", () => {
  it("returns an AgentTool and accepts a string, { content } or a full result", () => {
    const tool = defineTool({
      name: "echo",
      description: "Echo",
      parameters: { type: "object", properties: {} } as const,
      execute: () => ({ content: [{ type: "text", text: "hi" }] }),
    });
    expectTypeOf(tool).toEqualTypeOf<AgentTool>();
  });

  it("rejects an execute that returns something else", () => {
    defineTool({
      name: "echo",
      description: "Echo",
      parameters: weather,
      // @ts-expect-error a number is neither a string nor { content }
      execute: () => 42,
    });
  });

  it("rejects a Standard Schema that cannot give JSON Schema", () => {
    const noJsonSchema = {
      "~standard": {
        version: 1 as const,
        vendor: "handmade",
        validate: (value: unknown) => ({ value: value as { a: string } }),
      },
    };
    defineTool({
      name: "t",
      description: "t",
      // @ts-expect-error no `~standard.jsonSchema`
      parameters: noJsonSchema,
      execute: () => "",
    });
  });
});
