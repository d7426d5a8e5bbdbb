import { ConfigError } from "./configError.js";

/**
 * How one setting's text becomes its value. `parse` gets the variable's text trimmed and
 * never empty (an empty or blank variable counts as unset); it returns `undefined` for a text
 * that means unset too (a list of no items), and throws `ConfigError` naming the variable,
 * never anything else. `type` says in words what it takes (for the reference).
 */
export interface SettingParser<T> {
  /** What it takes, in words (`integer > 0`, `comma list`). */
  readonly type: string;
  /** The value of `raw`, the text of variable `env`; throws `ConfigError` naming `env`. */
  parse(raw: string, env: string): T | undefined;
}

/** A parser of the text as it is (trimmed). */
export const text: SettingParser<string> = { type: "text", parse: (raw) => raw };

/** A parser of a whole number above 0 (ports, caps, milliseconds). */
export const positiveInt: SettingParser<number> = {
  type: "integer > 0",
  parse(raw, env) {
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0)
      throw new ConfigError(`${env} must be a positive integer, got "${raw}"`);
    return value;
  },
};

/** A parser of a whole number, 0 included (`YIEM_REPLICA_ACKS=0` turns acknowledgements off). */
export const wholeNumber: SettingParser<number> = {
  type: "integer ≥ 0",
  parse(raw, env) {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0)
      throw new ConfigError(`${env} must be a whole number (0 or more), got "${raw}"`);
    return value;
  },
};

/** A parser of any number above 0, fractions included (seconds, a timeout). */
export const positiveNumber: SettingParser<number> = {
  type: "number > 0",
  parse(raw, env) {
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigError(`${env} must be a positive number, got "${raw}"`);
    return value;
  },
};

/** A parser of a comma-separated list: each item trimmed, empty items dropped; no item is unset. */
export const list: SettingParser<string[]> = {
  type: "comma list",
  parse(raw) {
    const items = splitList(raw);
    return items.length > 0 ? items : undefined;
  },
};

function splitList(raw: string): string[] {
  return raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** A parser of a switch that is on only when the variable is exactly `1`; any other text is off. */
export const flag: SettingParser<boolean> = { type: "`1` or unset", parse: (raw) => raw === "1" };

/** `YIEM_BUILTIN_TOOLS`: `none` gives `[]`, else the names (checked when the tools load). */
export const toolNames: SettingParser<string[]> = {
  type: "`none` or comma list",
  parse(raw, env) {
    const names = splitList(raw);
    if (names.length === 1 && names[0]?.toLowerCase() === "none") return [];
    if (names.length === 0 || names.some((name) => name.toLowerCase() === "none")) {
      throw new ConfigError(`${env} must be none or a comma list of tool names, got "${raw}"`);
    }
    return names;
  },
};
