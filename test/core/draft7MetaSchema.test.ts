/**
 * A tool's input schema is checked against the draft-07 meta-schema by ajv's standalone code,
 * generated ahead of time (`scripts/draft7MetaValidator.ts`), instead of ajv compiling that
 * meta-schema at a process's first schema: the generated file must be what this ajv generates,
 * and an invalid schema must still fail with ajv's own message.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { defineTool } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

/** What `defineTool` says of `parameters`, or `undefined` when it takes them. */
function refusal(parameters: Record<string, unknown>): string | undefined {
  try {
    defineTool({ name: "t", description: "d", parameters, execute: () => "" });
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(
      /^defineTool "t": the tool's input schema is invalid: /,
      "",
    );
  }
}

describe("the draft-07 meta-schema check of a tool's input schema", () => {
  it("runs code that is what this ajv generates (tsx scripts/draft7MetaValidator.ts after an upgrade)", () => {
    const check = () =>
      execFileSync(
        join(repoRoot, "node_modules", ".bin", "tsx"),
        ["scripts/draft7MetaValidator.ts", "--check"],
        { cwd: repoRoot, stdio: "pipe" },
      );
    expect(check).not.toThrow();
  });

  it("refuses an invalid schema with ajv's own message, and takes a valid one", () => {
    const object = (more: Record<string, unknown>) => ({ type: "object", ...more });
    expect(refusal(object({ properties: { a: { type: "strng" } } }))).toBe(
      "schema is invalid: data/properties/a/type must be equal to one of the allowed values, data/properties/a/type must be array, data/properties/a/type must match a schema in anyOf",
    );
    // ajv's check with this process's `uniqueItems` (its first duplicate named first).
    expect(refusal(object({ required: ["a", "a"] }))).toBe(
      "schema is invalid: data/required must NOT have duplicate items (items ## 0 and 1 are identical)",
    );
    expect(refusal(object({ properties: { t: { type: ["string", "string"] } } }))).toBe(
      "schema is invalid: data/properties/t/type must be equal to one of the allowed values, data/properties/t/type must NOT have duplicate items (items ## 0 and 1 are identical), data/properties/t/type must match a schema in anyOf",
    );
    expect(refusal(object({ required: "a" }))).toBe(
      "schema is invalid: data/required must be array",
    );
    expect(refusal(object({ properties: { n: { type: "integer", minimum: "0" } } }))).toBe(
      "schema is invalid: data/properties/n/minimum must be number",
    );
    expect(refusal(object({ additionalProperties: 3, minProperties: -1 }))).toBe(
      "schema is invalid: data/minProperties must be >= 0, data/additionalProperties must be object,boolean",
    );
    expect(refusal(object({ $schema: 7 }))).toBe("$schema must be a string");
    expect(refusal(object({ $schema: "https://json-schema.org/draft/2020-12/schema" }))).toBe(
      'no schema with key or ref "https://json-schema.org/draft/2020-12/schema"',
    );
    // Valid for the meta-schema, refused by ajv's compile: RE2 patterns, references.
    expect(refusal(object({ properties: { p: { type: "string", pattern: "(?=a)" } } }))).toBe(
      "Invalid regular expression: /(?=a)/u: invalid perl operator: (?=",
    );
    expect(refusal(object({ properties: { r: { $ref: "#/definitions/missing" } } }))).toBe(
      "can't resolve reference #/definitions/missing from id #",
    );
    expect(
      refusal(
        object({
          $schema: "http://json-schema.org/draft-07/schema#",
          properties: { city: { type: "string", minLength: 1 }, n: { type: ["integer", "null"] } },
          required: ["city"],
        }),
      ),
    ).toBeUndefined();
  });
});
