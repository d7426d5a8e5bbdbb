import { type AgentTool, defineTool, type ToolArgs, type ToolExecuteFn } from "@yiem/core";
import { normalizeArgs, readString, validatorFrom } from "../toolSupport/args.js";
import { textResult } from "../toolSupport/results.js";

/** The local wall-clock time of one instant in one time zone. */
export interface ZonedTime {
  /** The canonical IANA name, e.g. `"Asia/Tokyo"` for `"asia/tokyo"`. */
  timezone: string;
  /** `YYYY-MM-DD HH:mm:ss`, 24-hour clock. */
  local: string;
  /** ISO 8601 with the zone's offset, e.g. `2026-11-30T14:05:09+09:00`. */
  iso: string;
  /** `+09:00`, `-03:30`, `+00:00`. */
  utcOffset: string;
}

/** Throws the tool's "unknown time zone" error, with a hint for the model. */
function unknownZone(timezone: string): never {
  throw new Error(`Unknown time zone "${timezone}": use an IANA name such as "Asia/Tokyo"`);
}

/** Builds a formatter for `timezone`; `Intl` throws a `RangeError` for unknown zones. */
function formatterFor(timezone: string, timeZoneName?: "longOffset"): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      numberingSystem: "latn",
      ...(timeZoneName ? { timeZoneName } : {}),
    });
  } catch (err) {
    if (err instanceof RangeError) unknownZone(timezone);
    throw err;
  }
}

/** `"GMT+9"`-style names from ICU as `+09:00`; `"GMT"` alone is `+00:00`. */
function normalizeOffset(gmtName: string): string {
  const match = /^(?:GMT|UTC)(?:([+-])(\d{1,2})(?::?(\d{2}))?)?$/.exec(gmtName.trim());
  if (!match?.[1]) return "+00:00";
  return `${match[1]}${match[2]?.padStart(2, "0")}:${match[3] ?? "00"}`;
}

/**
 * Formats `at` as wall-clock time in `timezone`. Throws `Unknown time zone "…"` for a
 * name that `Intl` does not know.
 *
 * @example
 * formatZonedTime("Asia/Tokyo", new Date("2026-11-30T05:05:09Z"))
 * // { timezone: "Asia/Tokyo", local: "2026-11-30 14:05:09",
 * //   iso: "2026-11-30T14:05:09+09:00", utcOffset: "+09:00" }
 */
export function formatZonedTime(timezone: string, at: Date = new Date()): ZonedTime {
  const formatter = formatterFor(timezone, "longOffset");
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(at)) parts[part.type] = part.value;
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  const time = `${parts.hour}:${parts.minute}:${parts.second}`;
  const utcOffset = normalizeOffset(parts.timeZoneName ?? "GMT");
  return {
    timezone: formatter.resolvedOptions().timeZone,
    local: `${date} ${time}`,
    iso: `${date}T${time}${utcOffset}`,
    utcOffset,
  };
}

/** Reads and checks the arguments; throws on a missing name or an unknown zone. */
function parseArgs(args: ToolArgs): { timezone: string } {
  const timezone = readString(args, "timezone");
  formatterFor(timezone);
  return { timezone };
}

/**
 * Lifecycle §17 `prepareArguments`: trims the zone and turns spaces into underscores, so
 * `" America/New York "` becomes `"America/New_York"`.
 */
export function prepareArguments(args: ToolArgs): ToolArgs {
  const out = normalizeArgs(args);
  if (typeof out.timezone === "string") out.timezone = out.timezone.replace(/\s+/g, "_");
  return out;
}

/** An error text when `timezone` is missing, blank or unknown to `Intl`, else `undefined`. */
const checkTimezone: (args: ToolArgs) => string | undefined = validatorFrom(parseArgs);

/**
 * The tool, defined once: `getTool()` hands out copies, and the lifecycle §17 exports below
 * are its steps (`defineTool` wraps `execute` and adds the schema check to `checkTimezone`).
 */
const getTimeTool: AgentTool = defineTool({
  name: "getTime",
  label: "Time Lookup",
  description:
    "Get the current local date and time in a time zone, with its UTC offset. " +
    'Takes an IANA time zone name such as "Asia/Tokyo", "Europe/London" or "UTC".',
  parameters: {
    type: "object",
    properties: {
      timezone: {
        type: "string",
        minLength: 1,
        description: 'IANA time zone name, e.g. "Asia/Tokyo", "America/New_York", "UTC".',
      },
    },
    required: ["timezone"],
  },
  execute: (args) => {
    const { timezone } = parseArgs(args);
    const now = formatZonedTime(timezone);
    const text = `Current time in ${now.timezone}: ${now.local} (UTC${now.utcOffset})`;
    return textResult(text, { timezone: now.timezone, iso: now.iso, utcOffset: now.utcOffset });
  },
  prepareArguments,
  validateRequiredArgs: checkTimezone,
  parallelToolExecute: true,
  idempotent: true,
});

/**
 * Lifecycle §17 `validateRequiredArgs`: an error text when `timezone` is missing, blank or
 * unknown to `Intl` (or the arguments break the schema), else `undefined`.
 */
export const validateRequiredArgs: (args: ToolArgs) => string | undefined =
  getTimeTool.validateRequiredArgs ?? checkTimezone;

/**
 * Lifecycle §17 `executeTool`: the current time in `args.timezone`.
 * Text: `Current time in Asia/Tokyo: 2026-11-30 14:05:09 (UTC+09:00)`;
 * details: `{ timezone, iso, utcOffset }`. Throws (rejects) for an unknown zone.
 */
export const executeTool: ToolExecuteFn = getTimeTool.execute;

/**
 * Lifecycle §17 `getTool`: the `getTime` tool (parallel-safe, idempotent), made with
 * `defineTool` from an inline JSON Schema (so `execute`'s `args.timezone` is a `string`).
 *
 * @example await getTool().execute("call-1", { timezone: "Asia/Tokyo" }, undefined, () => {})
 */
export function getTool(): AgentTool {
  return { ...getTimeTool };
}
