/**
 * `yiem`: the command line of a Yiem cluster. Reads REDIS_URL and YIEM_PREFIX from the
 * environment; `yiem --help` lists the commands. Nothing here loads Redis' client: the
 * commands load it when they connect, so `--help` and `--version` start fast.
 */
import { readFileSync } from "node:fs";
import { abortCommand } from "./commands/abort.js";
import { agentsCommand } from "./commands/agents.js";
import { type Command, commandHelp } from "./commands/command.js";
import { approveCommand, denyCommand } from "./commands/decide.js";
import { keysCommand } from "./commands/keys.js";
import { limitsCommand } from "./commands/limits.js";
import { pendingCommand } from "./commands/pending.js";
import { sendCommand } from "./commands/send.js";
import { treeCommand } from "./commands/tree.js";
import { watchCommand } from "./commands/watch.js";
import { workersCommand } from "./commands/workers.js";
import { describeFailure, EXIT, UsageError } from "./errors.js";
import { type CliIo, processIo, writeLine } from "./io.js";

/** Every command of `yiem`. */
export const COMMANDS: readonly Command[] = [
  sendCommand,
  watchCommand,
  abortCommand,
  workersCommand,
  agentsCommand,
  limitsCommand,
  treeCommand,
  pendingCommand,
  approveCommand,
  denyCommand,
  keysCommand,
];

/** The one-line usage of `yiem`. */
export const MAIN_USAGE =
  "yiem <send|watch|abort|workers|agents|limits|tree|pending|approve|deny|keys> [arguments] [options]   (yiem --help, yiem --version)";

/** The version in apps/cli/package.json (`../package.json` from both `src` and `dist`). */
export function readVersion(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return String((JSON.parse(text) as { version?: unknown }).version ?? "unknown");
}

function mainHelp(): string {
  return [
    `usage: ${MAIN_USAGE}`,
    "",
    ...COMMANDS.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    "",
    "Environment: REDIS_URL (default redis://127.0.0.1:6379), YIEM_PREFIX (default yiem).",
    "Exit codes: 0 ok, 1 run ended with an error or aborted, 2 usage/setup error or unknown session, 130 Ctrl-C.",
  ].join("\n");
}

function findCommand(name: string): Command {
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`, MAIN_USAGE);
  return command;
}

/** Runs `yiem` with `argv` (without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined) throw new UsageError("missing command", MAIN_USAGE);
    if (name === "--help" || name === "-h" || name === "help") {
      const topic = rest[0];
      writeLine(io.stdout, topic ? commandHelp(findCommand(topic)) : mainHelp());
      return EXIT.ok;
    }
    if (name === "--version" || name === "-v" || name === "version") {
      writeLine(io.stdout, `yiem ${readVersion()}`);
      return EXIT.ok;
    }
    return await findCommand(name).run(rest, io);
  } catch (err) {
    const { lines, exitCode } = await describeFailure(err);
    for (const line of lines) writeLine(io.stderr, line);
    return exitCode;
  }
}

/** Exits once stdout and stderr have taken everything written to them. */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
}

// `yiem watch … | head`: a reader that went away ends the command quietly.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(EXIT.ok);
  throw err;
});

runCli(process.argv.slice(2)).then(exitAfterFlush, async (err: unknown) => {
  writeLine(process.stderr, (await describeFailure(err)).lines.join("\n"));
  exitAfterFlush(EXIT.runFailed);
});
