import { formatZonedTime } from "@yiem/tools";
import { describe, expect, it } from "vitest";
import { builtinTool } from "./builtinTool.js";

const { executeTool, prepareArguments, validateRequiredArgs } = builtinTool("getTime");

const noProgress = (): void => {};

/** Runs the tool as the pipeline would after prepare and validation. */
async function getTime(timezone: string) {
  return executeTool("call-1", { timezone }, undefined, noProgress);
}

describe("getTime (lifecycle §17 tool-file contract)", () => {
  it("getTime reports Tokyo and London in their own offsets", async () => {
    const before = Date.now();
    const tokyo = await getTime("Asia/Tokyo");
    const london = await getTime("Europe/London");
    const text = (result: typeof tokyo) => (result.content[0] as { text: string }).text;

    expect(text(tokyo)).toMatch(
      /^Current time in Asia\/Tokyo: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(UTC\+09:00\)$/,
    );
    expect(tokyo.details).toMatchObject({ timezone: "Asia/Tokyo", utcOffset: "+09:00" });
    expect(text(london)).toMatch(/^Current time in Europe\/London: .* \(UTC\+0[01]:00\)$/);
    expect(["+00:00", "+01:00"]).toContain(london.details.utcOffset);
    for (const result of [tokyo, london]) {
      const instant = Date.parse(String(result.details.iso));
      expect(instant).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(instant).toBeLessThanOrEqual(Date.now());
    }
  });

  it("formats a fixed instant in zones with whole, half-hour, negative and DST offsets", () => {
    const winter = new Date("2026-11-30T05:05:09Z");
    const summer = new Date("2026-07-01T23:30:00Z");
    expect(formatZonedTime("Asia/Tokyo", winter)).toEqual({
      timezone: "Asia/Tokyo",
      local: "2026-11-30 14:05:09",
      iso: "2026-11-30T14:05:09+09:00",
      utcOffset: "+09:00",
    });
    expect(formatZonedTime("Europe/London", winter).utcOffset).toBe("+00:00");
    expect(formatZonedTime("Europe/London", summer).iso).toBe("2026-07-02T00:30:00+01:00");
    expect(formatZonedTime("Asia/Kolkata", winter).utcOffset).toBe("+05:30");
    expect(formatZonedTime("America/New_York", winter).iso).toBe("2026-11-30T00:05:09-05:00");
    expect(formatZonedTime("UTC", winter).iso).toBe("2026-11-30T05:05:09+00:00");
  });

  it("getTime accepts a lower-case or spaced zone name and answers with the canonical one", async () => {
    const args = prepareArguments({ timezone: "  america/new york " });
    expect(args).toEqual({ timezone: "america/new_york" });
    const result = await executeTool("call-1", args, undefined, noProgress);
    expect(result.details.timezone).toBe("America/New_York");
  });

  it("getTime rejects an unknown zone with an IANA hint", async () => {
    const message = 'Unknown time zone "Mars/Base": use an IANA name such as "Asia/Tokyo"';
    await expect(getTime("Mars/Base")).rejects.toThrow(message);
    expect(validateRequiredArgs({ timezone: "Mars/Base" })).toBe(message);
  });

  it("getTime validateRequiredArgs names a missing or blank timezone", () => {
    expect(validateRequiredArgs({})).toBe(
      'invalid arguments: "timezone" must be a non-empty string',
    );
    expect(validateRequiredArgs({ timezone: "  " })).toMatch(/"timezone"/);
    expect(validateRequiredArgs({ timezone: "Asia/Tokyo" })).toBeUndefined();
  });
});
