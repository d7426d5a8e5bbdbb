/**
 * How an MCP server that went down is brought back: the n-th attempt in a row waits
 * `minMs · 2^n`, at most `maxMs`; a session that stayed up for `stableMs` resets the count,
 * so a server that crashes once a day restarts within a quarter second, and one that crashes
 * at every start is tried every 30 s.
 */
export const RESTART_BACKOFF = { minMs: 250, maxMs: 30_000, stableMs: 10_000 } as const;

/**
 * The wait before the next attempt, after `failures` attempts in a row that did not stay up.
 *
 * @example nextRestartDelayMs(0) // 250; nextRestartDelayMs(3) // 2000; nextRestartDelayMs(20) // 30000
 */
export function nextRestartDelayMs(failures: number): number {
  return Math.min(RESTART_BACKOFF.maxMs, RESTART_BACKOFF.minMs * 2 ** Math.min(failures, 20));
}
