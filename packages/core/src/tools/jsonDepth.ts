/**
 * The default cap on how deeply a value from outside (a tool call's arguments, a run's input,
 * a gateway request body) may nest objects and arrays: 64 levels. Code that walks a value
 * recursively (validators, `JSON.stringify`, `structuredClone`) is safe far deeper than this;
 * a value 2,500 levels deep overflows the stack in several of them.
 */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects and arrays more than `maxDepth` levels deep (`{}` is one
 * level, `{"a":[1]}` two). One pass over the characters, brackets inside strings skipped:
 * linear time, no recursion, so it is safe on any text, before `JSON.parse`. Text that is not
 * JSON is measured as far as its brackets go. Never throws.
 *
 * @example jsonTextNestsDeeperThan('{"a":[[1]]}', 2) // true
 */
export function jsonTextNestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether a value nests objects and arrays more than `maxDepth` levels deep (counted as
 * `jsonTextNestsDeeperThan` counts its JSON). Walks the value with a stack of its own, never
 * recursing, and stops at the first level past `maxDepth`, so a value of any depth (or a
 * cycle, which counts as too deep) is safe to measure. A getter or proxy that throws makes
 * the value too deep. Never throws.
 *
 * @example valueNestsDeeperThan({ a: [[1]] }, 2) // true
 */
export function valueNestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  try {
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (typeof next.value !== "object" || next.value === null) continue;
      if (next.depth > maxDepth) return true;
      for (const child of Object.values(next.value)) {
        pending.push({ value: child, depth: next.depth + 1 });
      }
    }
  } catch {
    return true;
  }
  return false;
}
