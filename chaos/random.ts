/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same sequence, so a
 * soak's workload and fault schedule can be replayed from the seed it printed.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T;
  /** A new independent source derived from this one and `stream` (a name). */
  fork(stream: string): Random;
}

/** A source seeded with `seed` (any 32-bit integer). */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error("random.pick: no items to pick from");
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    fork: (stream) => createRandom((seed ^ hashText(stream)) >>> 0),
  };
}

/** FNV-1a of `text`: a stable 32-bit number, for deriving seeds and per-call choices. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
