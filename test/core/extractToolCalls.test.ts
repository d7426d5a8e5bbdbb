import { extractToolCalls, validateRequiredArgs } from "@yiem/core";
import { normalizeToolCallBlocks, parseToolArguments } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";

describe("lifecycle §7 tool call extraction", () => {
  it("reads canonical toolCall blocks with JSON-string arguments, in order", () => {
    const calls = extractToolCalls([
      { type: "text", text: "let me check" },
      {
        type: "toolCall",
        id: "c1",
        name: "getTime",
        arguments: {},
        rawArguments: '{"timezone":"UTC"}',
      },
      { type: "toolCall", id: "c2", name: "getWeather", arguments: { city: "Tokyo" } },
    ]);
    expect(calls).toEqual([
      { type: "function", id: "c1", name: "getTime", arguments: { timezone: "UTC" } },
      { type: "function", id: "c2", name: "getWeather", arguments: { city: "Tokyo" } },
    ]);
  });

  it("reads the YiemAgent lifecycle's tool_calls array with the name at the top or under function", () => {
    const calls = extractToolCalls([
      {
        type: "tool_calls",
        tool_calls: [
          { id: "call_1", name: "getWeather", arguments: { city: "Tokyo" } },
          { id: "call_2", function: { name: "getTime", arguments: '{"timezone":"Asia/Tokyo"}' } },
        ],
      },
    ]);
    expect(calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call_1", "getWeather", { city: "Tokyo" }],
      ["call_2", "getTime", { timezone: "Asia/Tokyo" }],
    ]);
  });

  it("reads the YiemAgent lifecycle's single tool_call block and generates a missing id", () => {
    const [call] = extractToolCalls([
      { type: "tool_call", name: "getWeather", arguments: { city: "Oslo" } },
    ]);
    expect(call?.name).toBe("getWeather");
    expect(call?.id).toMatch(/^call_[0-9a-f]{24}$/); // the one id generator, as the adapter's
    expect(call?.argumentsError).toBeUndefined();
  });

  it.each([
    ["malformed JSON", "{city: Tokyo", /not valid JSON/],
    ["an array", "[1,2]", /must be a JSON object, got an array/],
    ["a number", "42", /must be a JSON object, got a number/],
    ["null", "null", /must be a JSON object, got null/],
    ["a __proto__ key", '{"a":{"__proto__":{"polluted":true}}}', /forbidden key: a.__proto__/],
    ["a constructor key", '{"constructor":{"prototype":{}}}', /forbidden key: constructor/],
  ])(
    "turns arguments that are %s into that call's error, never an exception",
    (_label, raw, expected) => {
      const calls = extractToolCalls([
        { type: "toolCall", id: "bad", name: "getTime", arguments: {}, rawArguments: raw },
        { type: "toolCall", id: "good", name: "getTime", arguments: {}, rawArguments: "{}" },
      ]);
      expect(calls[0]?.argumentsError).toMatch(expected);
      expect(calls[0]?.argumentsError).toMatch(/^getTime: /);
      expect(calls[1]?.argumentsError).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it("refuses oversized arguments and calls past the per-message cap", () => {
    const big = JSON.stringify({ text: "x".repeat(300 * 1024) });
    const [oversized] = extractToolCalls([
      { type: "toolCall", id: "big", name: "t", arguments: {}, rawArguments: big },
    ]);
    expect(oversized?.argumentsError).toMatch(/too large: \d+ bytes \(limit 262144\)/);
    const many = Array.from({ length: 5 }, (_, i) => ({
      type: "toolCall",
      id: `c${i}`,
      name: "t",
      arguments: {},
    }));
    const calls = extractToolCalls(many, { maxToolCalls: 3 });
    expect(calls.map((c) => c.argumentsError === undefined)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(calls[4]?.argumentsError).toMatch(/too many tool calls in one message: 5 \(limit 3\)/);
  });

  it("refuses arguments nested past maxArgumentDepth, as text or as an object, whatever their depth", () => {
    const nested = (depth: number) => `{"a":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const deepObject: Record<string, unknown> = {};
    let cursor = deepObject;
    for (let i = 0; i < 20_000; i++) cursor = cursor.a = {} as Record<string, unknown>;
    const calls = extractToolCalls([
      { type: "toolCall", id: "d1", name: "t", arguments: {}, rawArguments: nested(2_500) },
      { type: "toolCall", id: "d2", name: "t", arguments: {}, rawArguments: nested(100_000) },
      { type: "toolCall", id: "d3", name: "t", arguments: deepObject },
      { type: "toolCall", id: "ok", name: "t", arguments: {}, rawArguments: nested(63) },
    ]);
    const deep = "t: arguments are nested too deeply (limit 64 levels of objects and arrays)";
    expect(calls.map((call) => call.argumentsError)).toEqual([deep, deep, deep, undefined]);
    const [tight] = extractToolCalls(
      [{ type: "toolCall", id: "t", name: "t", arguments: {}, rawArguments: nested(4) }],
      { maxArgumentDepth: 4 },
    );
    expect(tight?.argumentsError).toMatch(/limit 4 levels/);
    // What the model adapter reads from a completion: never throws, the call is refused.
    const [block] = normalizeToolCallBlocks([
      { type: "toolCall", id: "d", name: "t", arguments: {}, rawArguments: nested(2_500) },
    ]);
    expect(block?.arguments).toEqual({});
  });

  it("flags a call without a tool name", () => {
    const [call] = extractToolCalls([{ type: "tool_call", id: "x", arguments: {} }]);
    expect(call?.argumentsError).toBe("the tool call has no tool name");
  });

  it("treats missing or empty arguments as an empty object", () => {
    expect(parseToolArguments(undefined)).toEqual({ ok: true, args: {} });
    expect(parseToolArguments("")).toEqual({ ok: true, args: {} });
  });
});

describe("normalised tool call blocks keep the parsed arguments", () => {
  it("fills arguments from the raw JSON string, and reuses an adapter's parsed object without parsing again", () => {
    const parsed = { city: "Tokyo" };
    const [fromRaw, fromAdapter] = normalizeToolCallBlocks([
      { type: "toolCall", id: "a", name: "f", arguments: {}, rawArguments: '{"n":[1,{"x":null}]}' },
      { type: "toolCall", id: "b", name: "f", arguments: parsed, rawArguments: '{"city":"Tokyo"}' },
    ]);
    expect(fromRaw).toEqual({
      type: "toolCall",
      id: "a",
      name: "f",
      arguments: { n: [1, { x: null }] },
      rawArguments: '{"n":[1,{"x":null}]}',
    });
    expect(fromAdapter?.arguments).toBe(parsed);
    expect(fromAdapter?.rawArguments).toBe('{"city":"Tokyo"}');
    const [call] = extractToolCalls([fromAdapter]);
    expect(call?.arguments).toEqual({ city: "Tokyo" });
    expect(call?.arguments).not.toBe(parsed); // the pipeline gets its own copy
  });

  it.each([
    ["malformed JSON", { arguments: {}, rawArguments: "{oops" }, /not valid JSON/],
    ["an own __proto__ key", { arguments: JSON.parse('{"__proto__":{"x":1}}') }, /forbidden key/],
    ["a nested constructor key", { arguments: { a: { constructor: 1 } } }, /forbidden key: a/],
    ["an array", { arguments: [1, 2] }, /must be a JSON object, got an array/],
  ])(
    "leaves arguments {} with the payload in rawArguments for %s, so extraction still refuses it",
    (_label, shape, expected) => {
      const block = { type: "toolCall", id: "h", name: "f", ...shape };
      const [normalized] = normalizeToolCallBlocks([block]);
      expect(normalized?.arguments).toEqual({});
      expect(normalized?.rawArguments).toEqual(expect.any(String));
      const [call] = extractToolCalls([normalized]);
      expect(call?.argumentsError).toMatch(expected);
      expect(extractToolCalls([block])[0]?.argumentsError).toBe(call?.argumentsError);
    },
  );

  it("refuses an adapter's parsed object whose raw text is over the byte cap", () => {
    const raw = JSON.stringify({ text: "x".repeat(100) });
    const block = {
      type: "toolCall",
      id: "big",
      name: "f",
      arguments: JSON.parse(raw),
      rawArguments: raw,
    };
    const [normalized] = normalizeToolCallBlocks([block], { maxArgumentBytes: 64 });
    expect(normalized?.arguments).toEqual({});
    expect(normalized?.rawArguments).toBe(raw);
    const [call] = extractToolCalls([block], { maxArgumentBytes: 64 });
    expect(call?.argumentsError).toMatch(/too large: \d+ bytes \(limit 64\)/);
  });

  it("never throws on a cyclic object, and refuses it", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const block = { type: "toolCall", id: "c", name: "f", arguments: cyclic };
    expect(extractToolCalls([block])[0]?.argumentsError).toMatch(/nested too deeply/);
    const [normalized] = normalizeToolCallBlocks([block]);
    // The stored block keeps no cycle (a transcript must be writable), and still refuses.
    expect(normalized?.arguments).toEqual({});
    expect(JSON.stringify(normalized)).toContain("cannot be written as JSON");
    expect(extractToolCalls([normalized])[0]?.argumentsError).toMatch(/not valid JSON/);
  });
});

describe("lifecycle §8.1 step 3 default validation with full JSON Schema", () => {
  const schema = {
    type: "object",
    properties: {
      city: { type: "string", minLength: 2 },
      days: { type: "integer", minimum: 1, maximum: 7 },
      units: { enum: ["metric", "imperial"] },
      where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
    },
    required: ["city"],
    additionalProperties: false,
  };

  it("accepts valid arguments", () => {
    expect(
      validateRequiredArgs({ city: "Tokyo", days: 3, units: "metric" }, schema),
    ).toBeUndefined();
  });

  it("names every offending field, nested ones with their path", () => {
    const error = validateRequiredArgs({ days: 9, units: "kelvin", where: {}, extra: 1 }, schema);
    expect(error).toMatch(/^invalid arguments: /);
    expect(error).toContain('"city" is required');
    expect(error).toContain('"days" must be <= 7');
    expect(error).toContain('"units" must be equal to one of the allowed values');
    expect(error).toContain('"where.lat" is required');
    expect(error).toContain('"extra" is not an allowed property');
  });

  it("checks types beyond 'required'", () => {
    expect(validateRequiredArgs({ city: 12 }, schema)).toBe(
      'invalid arguments: "city" must be string',
    );
  });

  it("reports an invalid schema as an error text instead of throwing", () => {
    expect(validateRequiredArgs({}, { type: "not-a-type" })).toMatch(/input schema is invalid/);
  });
});

describe("hostile input: schema patterns cannot be made to backtrack", () => {
  it("validates a catastrophic pattern against a crafted string without backtracking", () => {
    const schema = { type: "object", properties: { id: { type: "string", pattern: "^(a+)+$" } } };
    const crafted = `${"a".repeat(50_000)}!`;
    // With a backtracking engine this call would not return for longer than the test's
    // timeout (2^50 steps); RE2 answers in linear time.
    const error = validateRequiredArgs({ id: crafted }, schema);
    expect(error).toContain('"id" must match pattern');
    expect(validateRequiredArgs({ id: "aaaa" }, schema)).toBeUndefined();
  });
});
