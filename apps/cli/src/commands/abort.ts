import { parseArgs } from "node:util";
import type { AbortOutcome } from "@yiem/core/client";
import { expectKnownSession, withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const USAGE = "yiem abort SESSION";

/** What `yiem abort` prints: the run it stopped, or that there was none. */
function describeAbort(sessionId: string, outcome: AbortOutcome): string {
  if (outcome.kind === "noOpenRun")
    return `Session ${sessionId} has no open run: nothing to abort.`;
  return `Abort sent to session ${sessionId}: its open run ${outcome.runId} ends aborted (recorded, so a coordinator started later stops it too).`;
}

/** `yiem abort`: aborts a session's current run, wherever its tool calls run. */
export const abortCommand: Command = {
  name: "abort",
  summary:
    "Aborts the session's open run: its running tool calls get their abort signal, waiting ones are dropped, and the run ends with stopReason aborted. The abort is recorded, so a run no coordinator holds right now (parked for approval, or every coordinator down) is stopped when one resumes it. A session with no open run is left alone. Exit code 2 for an unknown session.",
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
    const outcome = await withCluster(io.env, async ({ client }) => {
      await expectKnownSession(client, sessionId);
      return client.abort(sessionId);
    });
    writeLine(io.stdout, describeAbort(sessionId, outcome));
    return EXIT.ok;
  },
};
