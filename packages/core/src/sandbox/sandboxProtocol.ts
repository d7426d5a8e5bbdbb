/**
 * What the parent and the sandbox child (`sandboxHost.mjs`) exchange: one request as JSON on
 * the child's stdin, then JSON lines on its stdout: `ready` once QuickJS is loaded, then one
 * reply. Internal to the sandbox folder.
 */

/** The request the child reads from stdin. */
export interface HostRequest {
  /** `compile` only checks that the body compiles; nothing of it runs. */
  mode: "run" | "compile";
  code: string;
  argsJson: string;
  timeoutMs: number;
  memoryBytes: number;
  stackBytes: number;
  maxResultChars: number;
  maxLogChars: number;
  /** Absolute paths of the CommonJS entry points the child loads QuickJS from. */
  corePath: string;
  variantPath: string;
}

/** One line the child writes to stdout. */
export type HostReply =
  | { kind: "ready" }
  | { kind: "ok"; json: string; logs: string[] }
  | { kind: "timeout" }
  | { kind: "memory" }
  | { kind: "threw"; message: string }
  | { kind: "notJson"; message: string }
  | { kind: "tooLarge"; size: number }
  | { kind: "crashed"; message: string };

/** The field each reply kind must carry, and its type. */
const FIELDS: Record<HostReply["kind"], [string, "string" | "number"] | undefined> = {
  ready: undefined,
  ok: ["json", "string"],
  timeout: undefined,
  memory: undefined,
  threw: ["message", "string"],
  notJson: ["message", "string"],
  tooLarge: ["size", "number"],
  crashed: ["message", "string"],
};

function hasShape(value: Record<string, unknown>): boolean {
  if (typeof value.kind !== "string" || !Object.hasOwn(FIELDS, value.kind)) return false;
  const field = FIELDS[value.kind as HostReply["kind"]];
  if (field && typeof value[field[0]] !== field[1]) return false;
  if (value.kind !== "ok") return true;
  return Array.isArray(value.logs) && value.logs.every((line) => typeof line === "string");
}

/**
 * Parses one stdout line of the child; anything that is not a well-formed reply (a child is
 * not trusted to be well-behaved) is `undefined`. Never throws.
 */
export function parseHostReply(line: string): HostReply | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    return hasShape(value as Record<string, unknown>) ? (value as HostReply) : undefined;
  } catch {
    return undefined;
  }
}
