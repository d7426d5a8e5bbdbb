/**
 * `onProcessWarm` / `markProcessWarm` (`@yiem/core/internal`): what a bundled app's loader
 * waits on to write its code cache once the process did its first piece of work.
 */
import { markProcessWarm, onProcessWarm } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";

describe("a process's first piece of work", () => {
  it("tells each listener once, a late one at once, whatever another listener throws", () => {
    const told: string[] = [];
    onProcessWarm(() => {
      throw new Error("a listener that fails");
    });
    onProcessWarm(() => told.push("early"));
    expect(told).toEqual([]);
    markProcessWarm();
    markProcessWarm();
    expect(told).toEqual(["early"]);
    onProcessWarm(() => told.push("late"));
    expect(told).toEqual(["early", "late"]);
  });
});
