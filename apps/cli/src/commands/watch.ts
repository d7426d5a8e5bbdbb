import { parseArgs } from "node:util";
import { type ClusterSession, expectKnownSession, probeSession, withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { type CliIo, interruptSignal, writeLine } from "../io.js";
import { createBusPrinter } from "../output.js";
import { watchWorkers } from "../workerWatch.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const USAGE = "yiem watch SESSION [--from-start] [--json]";

const OPTIONS = {
  "from-start": { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

interface WatchOptions {
  sessionId: string;
  fromStart: boolean;
  json: boolean;
}

/** Prints the session's events until Ctrl-C; resolves with exit code 130. */
async function watchSession(
  cluster: ClusterSession,
  options: WatchOptions,
  io: CliIo,
): Promise<number> {
  const { sessionId, fromStart, json } = options;
  const { latestSeq: seen } = await probeSession(cluster.config, sessionId); // fails fast when Redis is away
  await expectKnownSession(cluster.client, sessionId);
  const interrupt = interruptSignal(); // before the line that says Ctrl-C stops it
  const printer = createBusPrinter({ json, out: io.stdout, runEvents: true });
  const replay = fromStart ? ", replaying them" : "";
  printer.print(`watching session ${sessionId} (${seen} events so far${replay}; Ctrl-C to stop)`);
  const stopWatchingWorkers = watchWorkers({
    list: () => cluster.client.workers(),
    inUse: () => printer.workersInUse(),
    report: (live, draining) => printer.checkWorkers(live, draining),
  });
  try {
    const events = cluster.client.events(sessionId, { fromStart, signal: interrupt.signal });
    for await (const event of events) printer.event(event);
  } finally {
    stopWatchingWorkers();
    printer.stop();
    interrupt.dispose();
  }
  return EXIT.interrupted;
}

/** `yiem watch`: prints a session's events as they come, until Ctrl-C. */
export const watchCommand: Command = {
  name: "watch",
  summary:
    "Prints a session's events as they come (tool calls live, user input, answers as the model writes them), until Ctrl-C. Exit code 2 for an unknown session.",
  usage: USAGE,
  options: [
    "      --from-start   replay the session's stored events first",
    "      --json         one JSON line per event",
  ],
  async run(args, io) {
    const { values, positionals } = parseOrUsage(USAGE, () =>
      parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true }),
    );
    if (values.help) {
      writeLine(io.stdout, commandHelp(watchCommand));
      return EXIT.ok;
    }
    const [sessionId = ""] = expectPositionals(USAGE, positionals, ["SESSION"]);
    const options = {
      sessionId,
      fromStart: values["from-start"] ?? false,
      json: values.json ?? false,
    };
    return withCluster(io.env, (cluster) => watchSession(cluster, options, io));
  },
};
