/**
 * How long to wait before the next try of a Redis write that failed (`attempt` counts from
 * 0): 50 ms doubling to at most 5 s. One schedule for every retry loop of the coordinator.
 *
 * @example redisBackoffMs(0) // 50 · redisBackoffMs(3) // 400 · redisBackoffMs(20) // 5000
 */
export function redisBackoffMs(attempt: number): number {
  return Math.min(5000, 50 * 2 ** Math.min(attempt, 7));
}
