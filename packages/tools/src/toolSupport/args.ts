import type { ToolArgs } from "@yiem/core";

/**
 * Reads a required, non-empty string argument (already trimmed by `prepareArguments`).
 * Throws an `Error` naming the field when it is missing, not a string, or blank.
 *
 * @example readString({ city: "Tokyo" }, "city") // "Tokyo"
 */
export function readString(args: ToolArgs, field: string): string {
  const value = args[field];
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`invalid arguments: "${field}" must be a non-empty string`);
  }
  return value.trim();
}

/** Bounds and default of an optional numeric argument. */
export interface NumberRule {
  min: number;
  max: number;
  /** Used when the argument is absent; `undefined` leaves it absent. */
  default?: number;
  /** Require a whole number. */
  integer?: boolean;
}

/**
 * Reads an optional number within `[rule.min, rule.max]`, falling back to `rule.default`.
 * Throws an `Error` naming the field and its bounds when the value is out of range or not
 * a (whole, when `rule.integer`) number.
 *
 * @example readNumber({}, "maxBytes", { min: 1, max: 10, default: 5, integer: true }) // 5
 */
export function readNumber(args: ToolArgs, field: string, rule: NumberRule): number | undefined {
  const value = args[field];
  if (value === undefined || value === null) return rule.default;
  const kind = rule.integer ? "an integer" : "a number";
  const valid =
    typeof value === "number" &&
    Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    value >= rule.min &&
    value <= rule.max;
  if (!valid) {
    throw new Error(
      `invalid arguments: "${field}" must be ${kind} from ${rule.min} to ${rule.max}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Returns a copy of `args` where string values are trimmed and the listed fields, when
 * they hold a numeric string (models sometimes send `"5000"`), become numbers.
 * Never throws; anything it cannot convert is left for validation to report.
 *
 * @example normalizeArgs({ url: " http://a ", timeoutMs: "50" }, ["timeoutMs"])
 * // { url: "http://a", timeoutMs: 50 }
 */
export function normalizeArgs(args: ToolArgs, numericFields: readonly string[] = []): ToolArgs {
  const out: ToolArgs = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = typeof value === "string" ? value.trim() : value;
  }
  for (const field of numericFields) {
    const value = out[field];
    if (typeof value === "string" && value !== "" && Number.isFinite(Number(value))) {
      out[field] = Number(value);
    }
  }
  return out;
}

/**
 * Turns an argument parser that throws into a YiemAgent-style `validateRequiredArgs`: the
 * error text, or `undefined` when the arguments parse.
 *
 * @example const validate = validatorFrom(parseArgs); validate({}) // 'invalid arguments: ...'
 */
export function validatorFrom(
  parse: (args: ToolArgs) => unknown,
): (args: ToolArgs) => string | undefined {
  return (args) => {
    try {
      parse(args);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  };
}
