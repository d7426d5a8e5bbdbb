/**
 * Milliseconds on the machine's monotonic clock (`CLOCK_MONOTONIC` through `process.hrtime`),
 * with microsecond precision. Every process on the machine reads the same clock, so a
 * timestamp taken in a worker process can be compared with one taken here.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
