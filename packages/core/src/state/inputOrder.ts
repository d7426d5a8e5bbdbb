let arrivals = 0;

/**
 * The order of an input among its session's waiting inputs: its job's creation time (ms),
 * and within one millisecond the order this process fetched the jobs in (so a bulk add stays
 * in order), or `within` when given. Exact in a double: creation times times 1024 stay below
 * 2^53.
 *
 * @example inputOrder(job.timestamp) // 1795300000000 * 1024 + 7
 */
export function inputOrder(createdAt: number, within?: number): number {
  if (within === undefined) arrivals = (arrivals + 1) % 1024;
  return createdAt * 1024 + (within ?? arrivals);
}
