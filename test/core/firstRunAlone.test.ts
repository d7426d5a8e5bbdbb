/**
 * `firstRunAlone` (`@yiem/core/internal`): how long a coordinator that has just taken its first
 * job waits before taking more. It waits while its event loop is busy with that run, and
 * stops waiting once the loop has room (the run waits on something outside) or once the
 * process is warm (its first run finished).
 */
import { setImmediate as yieldLoop } from "node:timers/promises";
import { firstRunAlone, markProcessWarm } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";

/** Keeps this event loop busy for `ms`, in slices that let timers run between them. */
async function keepBusy(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const slice = Date.now() + 40;
    while (Date.now() < slice) {
      // running code, as a cold run does
    }
    await yieldLoop();
  }
}

describe("the first run going alone", () => {
  it("ends once the event loop has room, long before its cap", async () => {
    let ended = false;
    await firstRunAlone(60_000).then(() => {
      ended = true;
    });
    expect(ended).toBe(true);
  });

  it("goes on while the loop is busy, and ends when the process is warm", async () => {
    let ended = false;
    const alone = firstRunAlone(60_000).then(() => {
      ended = true;
    });
    await keepBusy(500);
    expect(ended).toBe(false);
    markProcessWarm();
    await alone;
    expect(ended).toBe(true);
  });
});
