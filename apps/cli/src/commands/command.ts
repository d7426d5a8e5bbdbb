import { parseArgs } from "node:util";
import { UsageError } from "../errors.js";
import { type CliIo, writeLine } from "../io.js";

/** One `yiem` subcommand. */
export interface Command {
  name: string;
  /** One line for `yiem --help`. */
  summary: string;
  /** `yiem <name> <arguments> [options]`. */
  usage: string;
  /** Option lines for `yiem <name> --help`. */
  options: string[];
  /** Runs the command; resolves with the exit code. */
  run(args: string[], io: CliIo): Promise<number>;
}

/**
 * Runs a `node:util` parseArgs call; a parse failure (unknown option, missing value…) becomes
 * a `UsageError` carrying `usage`.
 *
 * @example parseOrUsage(USAGE, () => parseArgs({ args, options, allowPositionals: true, strict: true }))
 */
export function parseOrUsage<T>(usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), usage);
  }
}

/** The full help of a command. */
export function commandHelp(command: Command): string {
  return [`usage: ${command.usage}`, "", command.summary, "", ...command.options].join("\n");
}

/** The positionals when there is exactly one per name, else a `UsageError` naming what is missing or extra. */
export function expectPositionals(usage: string, positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length)
    throw new UsageError(`missing ${names.slice(positionals.length).join(", ")}`, usage);
  if (positionals.length > names.length)
    throw new UsageError(`unexpected argument "${positionals[names.length]}"`, usage);
  return positionals;
}

/** Throws a `UsageError` when there are more than `max` positionals. */
export function expectAtMostPositionals(usage: string, positionals: string[], max: number): void {
  if (positionals.length > max)
    throw new UsageError(`unexpected argument "${positionals[max]}"`, usage);
}

/** What a listing command (`--json` and `--help` only) was asked. */
export interface ListingArgs {
  json: boolean;
  positionals: string[];
}

/**
 * Parses the arguments of a command whose only options are `--json` and `--help`. Prints the
 * command's help and returns `undefined` for `--help`; throws `UsageError` for anything else
 * it does not know.
 *
 * @example const parsed = parseListingArgs(treeCommand, args, io); if (!parsed) return EXIT.ok;
 */
export function parseListingArgs(
  command: Command,
  args: string[],
  io: CliIo,
): ListingArgs | undefined {
  const { values, positionals } = parseOrUsage(command.usage, () =>
    parseArgs({
      args,
      options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }),
  );
  if (values.help) {
    writeLine(io.stdout, commandHelp(command));
    return undefined;
  }
  return { json: values.json === true, positionals };
}
