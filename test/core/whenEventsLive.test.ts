/**
 * `whenEventsLive` hands a stream over once it is live, its first read already begun; a stream
 * that never goes live within the time given is closed and not handed over.
 */
import { whenEventsLive } from "@yiem/core";
import { describe, expect, it } from "vitest";

/** A stream of `items` that calls `onLive` after `liveAfterMs` (never live when undefined). */
function eventsOf(items: number[], onLive: () => void, liveAfterMs?: number) {
  const stop = new AbortController();
  const reads: string[] = [];
  async function* stream(): AsyncGenerator<number> {
    reads.push("opened");
    if (liveAfterMs === undefined) {
      // Never live: waits, as a subscription Redis never acknowledges, until closed.
      await new Promise((resolve) => stop.signal.addEventListener("abort", resolve));
      return;
    }
    setTimeout(onLive, liveAfterMs);
    await new Promise((resolve) => setTimeout(resolve, liveAfterMs + 5));
    yield* items;
  }
  return { stream: stream(), close: () => stop.abort(), reads, stop };
}

describe("whenEventsLive", () => {
  it("opens the stream at once and hands it over once live, its first event first", async () => {
    let opened: ReturnType<typeof eventsOf> | undefined;
    const live = await whenEventsLive((onLive) => {
      opened = eventsOf([1, 2, 3], onLive, 20);
      return opened;
    }, 1000);
    expect(opened?.reads).toEqual(["opened"]);
    const seen: number[] = [];
    for await (const n of live?.stream ?? []) seen.push(n);
    expect(seen).toEqual([1, 2, 3]);
  });

  it("closes a stream that is not live in time and hands nothing over", async () => {
    let opened: ReturnType<typeof eventsOf> | undefined;
    const live = await whenEventsLive((onLive) => {
      opened = eventsOf([1], onLive);
      return opened;
    }, 50);
    expect(live).toBeUndefined();
    expect(opened?.stop.signal.aborted).toBe(true);
  });
});
