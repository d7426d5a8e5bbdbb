/** Limits of one sandbox run; every field has a default. */
export interface SandboxLimits {
  /** How long the code may run, counted from when QuickJS is ready in the child. Default 2000. */
  timeoutMs?: number;
  /** Cap of the child's WebAssembly memory (QuickJS heap included). Default 32 MiB, least 16 MiB. */
  memoryBytes?: number;
  /** QuickJS stack. Default 256 KiB (deeper recursion is a `stack overflow` error). */
  stackBytes?: number;
  /** Largest result, in characters of its JSON. Default 1 MiB. */
  maxResultChars?: number;
  /** Total characters of `console.log` output kept. Default 16 KiB. */
  maxLogChars?: number;
  /** Time the child may take to start and load QuickJS, before the code runs. Default 10 s. */
  startupTimeoutMs?: number;
  /** Extra time after `timeoutMs` before the parent kills the child with SIGKILL. Default 500. */
  killGraceMs?: number;
}

/** Limits with every default filled in. */
export type ResolvedSandboxLimits = Required<SandboxLimits>;

/** The default limits of `runInSandbox`. */
export const DEFAULT_SANDBOX_LIMITS: ResolvedSandboxLimits = {
  timeoutMs: 2000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxResultChars: 1024 * 1024,
  maxLogChars: 16 * 1024,
  startupTimeoutMs: 10_000,
  killGraceMs: 500,
};

const MIN_MEMORY_BYTES = 16 * 1024 * 1024;

function positive(value: number | undefined, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0
    ? Math.floor(value)
    : fallback;
}

/** Fills in the defaults; a missing, non-finite or non-positive value takes its default. */
export function resolveSandboxLimits(limits: SandboxLimits = {}): ResolvedSandboxLimits {
  const d = DEFAULT_SANDBOX_LIMITS;
  return {
    timeoutMs: positive(limits.timeoutMs, d.timeoutMs),
    memoryBytes: Math.max(MIN_MEMORY_BYTES, positive(limits.memoryBytes, d.memoryBytes)),
    stackBytes: positive(limits.stackBytes, d.stackBytes),
    maxResultChars: positive(limits.maxResultChars, d.maxResultChars),
    maxLogChars: positive(limits.maxLogChars, d.maxLogChars),
    startupTimeoutMs: positive(limits.startupTimeoutMs, d.startupTimeoutMs),
    killGraceMs: positive(limits.killGraceMs, d.killGraceMs),
  };
}
