/**
 * What an agent definition brings to its runs: its budget lowered, never raised, by the
 * coordinator's; its structured output as JSON Schema, or as a zod schema that validates the
 * answer itself; bad settings refused when the agent is defined.
 */
import { agentRunSettings, defineAgent, InvalidAgentError } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const base = { instructions: "Report.", model: "m" };

describe("an agent's budget", () => {
  it("is lowered by the coordinator's budget limit by limit, never raised", () => {
    const agent = defineAgent({ ...base, name: "a", budget: { maxTokens: 9000, maxToolCalls: 4 } });
    const settings = agentRunSettings(agent, { budget: { maxTokens: 5000, maxModelCalls: 3 } });
    expect(settings.budget).toEqual({ maxTokens: 5000, maxToolCalls: 4, maxModelCalls: 3 });
    const raised = agentRunSettings(defineAgent({ ...base, name: "b", budget: { maxTokens: 1 } }), {
      budget: { maxTokens: 100 },
    });
    expect(raised.budget).toEqual({ maxTokens: 1 });
  });

  it("refuses a limit that is not a number of zero or more, or an unknown one", () => {
    expect(() => defineAgent({ ...base, name: "c", budget: { maxTokens: -1 } })).toThrow(
      InvalidAgentError,
    );
    expect(() =>
      defineAgent({ ...base, name: "d", budget: { maxDollars: 1 } as unknown as object }),
    ).toThrow(/budget\.maxDollars: unknown limit/);
  });
});

describe("an agent's structured output", () => {
  it("takes a zod schema: the model is asked for its JSON Schema, zod checks the answer", async () => {
    const agent = defineAgent({
      ...base,
      name: "z",
      outputSchema: z.object({ city: z.string(), degrees: z.number().transform((d) => d * 10) }),
      outputRetries: 1,
    });
    const settings = agentRunSettings(agent, {});
    expect(settings.outputSchema).toMatchObject({ type: "object", required: ["city", "degrees"] });
    expect(settings.outputRetries).toBe(1);
    expect(await settings.validateOutput?.({ city: "Oslo", degrees: 4 })).toEqual({
      ok: true,
      value: { city: "Oslo", degrees: 40 },
    });
    const bad = await settings.validateOutput?.({ city: 7, degrees: 4 });
    expect(bad).toMatchObject({ ok: false, errors: [expect.stringContaining('"city"')] });
  });

  it("refuses a schema that is not an object", () => {
    expect(() =>
      defineAgent({
        ...base,
        name: "s",
        outputSchema: "json" as unknown as Record<string, unknown>,
      }),
    ).toThrow(/outputSchema: must be a JSON Schema object/);
  });
});
