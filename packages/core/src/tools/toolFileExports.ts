/** How a tool file hands over its tool: a function to call, or the tool itself. */
export type ToolExport =
  | { kind: "factory"; name: string; make: () => unknown }
  | { kind: "value"; value: unknown }
  | { kind: "none" };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** A default export as the file wrote it: TypeScript compiled to CommonJS wraps it once. */
function unwrapDefault(value: unknown): unknown {
  if (isObject(value) && value.__esModule === true && "default" in value) return value.default;
  return value;
}

/**
 * Finds a tool file's tool (lifecycle §17): a `getTool()` export (also on a CommonJS
 * `module.exports`), else a default export that is a tool or a function returning one.
 */
export function findToolExport(mod: Record<string, unknown>): ToolExport {
  const fallback = unwrapDefault(mod.default);
  const getTool = mod.getTool ?? (isObject(fallback) ? fallback.getTool : undefined);
  if (typeof getTool === "function") {
    return { kind: "factory", name: "getTool()", make: getTool as () => unknown };
  }
  if (typeof fallback === "function") {
    return { kind: "factory", name: "the default export", make: fallback as () => unknown };
  }
  if (isObject(fallback)) return { kind: "value", value: fallback };
  return { kind: "none" };
}
