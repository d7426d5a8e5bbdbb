import type { SettingsSource } from "@yiem/core/client";
import { CliError, EXIT } from "./errors.js";

/** Where a command reads its settings and writes its output. */
export interface CliIo {
  /** The environment the settings are read from (`readSettings("cli")`); this process's when unset. */
  env?: SettingsSource;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** The real process's streams (and its environment, read through the settings catalogue). */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr };
}

/** Writes one line to `stream`. */
export function writeLine(stream: NodeJS.WritableStream, line = ""): void {
  stream.write(`${line}\n`);
}

/**
 * An `AbortSignal` that fires (reason `"interrupted"`) on the first Ctrl-C; a second Ctrl-C
 * exits at once with code 130. Call `dispose` when the command is done.
 */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort("interrupted");
  };
  process.on("SIGINT", onSigint);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onSigint) };
}

/** Reads a positive number of seconds from `raw`, or `fallback` when unset. */
export function parseSeconds(
  raw: string | undefined,
  name: string,
  fallback?: number,
): number | undefined {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new CliError(`${name} must be a positive number of seconds, got "${raw}"`, EXIT.setup);
  }
  return value;
}
