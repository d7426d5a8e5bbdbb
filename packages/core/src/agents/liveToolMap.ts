import type { AgentTool } from "../types/index.js";

/**
 * A read-only tool map computed on every read from other maps (a view, never a copy): a
 * subclass says what it holds with `get`, `has` and `entries`, and this class answers `size`,
 * `keys`, `values`, iteration and `forEach` from `entries`. Writes go to the plain `Map`
 * underneath, which nothing reads: views are not written to.
 *
 * @example class Empty extends LiveToolMap { override get() { return undefined; } override has() { return false; } override *entries() {} }
 */
export abstract class LiveToolMap extends Map<string, AgentTool> {
  abstract override get(name: string): AgentTool | undefined;

  abstract override has(name: string): boolean;

  abstract override entries(): MapIterator<[string, AgentTool]>;

  override get size(): number {
    return [...this.entries()].length;
  }

  override *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  override *values(): MapIterator<AgentTool> {
    for (const [, tool] of this.entries()) yield tool;
  }

  override [Symbol.iterator](): MapIterator<[string, AgentTool]> {
    return this.entries();
  }

  override forEach(
    callback: (value: AgentTool, key: string, map: Map<string, AgentTool>) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, tool] of this.entries()) callback.call(thisArg, tool, name, this);
  }
}
