import { parseArgs } from "node:util";
import { expectKnownSession, withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const USAGE = "yiem abort SESSION";

/** `yiem abort`: aborts a session's current run, wherever its tool calls run. */
export const abortCommand: Command = {
  name: "abort",
  summary:
    "Aborts the session's current run: its running tool calls get their abort signal, waiting ones are dropped, and the run ends with stopReason aborted. Exit code 2 for an unknown session.",
  usage: USAGE,
  options: [],
  async run(args, io) {
    const { values, positionals } = parseOrUsage(USAGE, () =>
      parseArgs({
        args,
        options: {
          help: { type: "boolean", short: "h" },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (values.help) {
      writeLine(io.stdout, commandHelp(abortCommand));
      return EXIT.ok;
    }
    const [sessionId = ""] = expectPositionals(USAGE, positionals, ["SESSION"]);
    await withCluster(io.env, async ({ client }) => {
      await expectKnownSession(client, sessionId);
      await client.abort(sessionId);
    });
    writeLine(
      io.stdout,
      `Abort sent to session ${sessionId}: its current run (if any) ends aborted.`,
    );
    return EXIT.ok;
  },
};
