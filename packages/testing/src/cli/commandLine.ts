import { parseArgs } from "node:util";

/** What `yiem-scripted-model` was asked to do. */
export type CommandLine =
  | { kind: "help" }
  | { kind: "serve"; script: string; host: string; port: number; model: string | undefined };

/** The port the command listens on without `--port`. */
export const DEFAULT_PORT = 4010;

/** The command's usage text. */
export const USAGE = `Usage: yiem-scripted-model --script FILE [--port ${DEFAULT_PORT}] [--host 127.0.0.1] [--model NAME]

Serves an OpenAI-compatible Chat Completions API (streamed and not) that answers from the
JSON script FILE: which tool calls to make, then which text to answer, for which user input.
Point OPENAI_BASE_URL at the URL it prints. --port 0 picks a free port. The script format is
in the README of @yiem/testing.`;

/** A command line that cannot run; the command prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parses the command's arguments (without node and the script). Throws {@link UsageError}. */
export function parseCommandLine(args: string[]): CommandLine {
  let values: { script?: string; host?: string; port?: string; model?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        script: { type: "string", short: "s" },
        host: { type: "string" },
        port: { type: "string", short: "p" },
        model: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return { kind: "help" };
  if (!values.script) throw new UsageError("--script FILE is required");
  return {
    kind: "serve",
    script: values.script,
    host: values.host ?? "127.0.0.1",
    port: parsePort(values.port),
    model: values.model,
  };
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(
      `--port must be a whole number from 0 to 65535, not ${JSON.stringify(text)}`,
    );
  }
  return port;
}
