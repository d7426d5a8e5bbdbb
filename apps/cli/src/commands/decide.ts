import { parseArgs } from "node:util";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars } from "../terminalText.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const APPROVE_USAGE = "yiem approve SESSION CALL [--by NAME]";
const DENY_USAGE = "yiem deny SESSION CALL [--reason TEXT] [--by NAME]";

/** Builds `yiem approve` or `yiem deny`: one decision job, waited for until a coordinator recorded it. */
function decisionCommand(approved: boolean): Command {
  const usage = approved ? APPROVE_USAGE : DENY_USAGE;
  const command: Command = {
    name: approved ? "approve" : "deny",
    summary: approved
      ? "Approves a tool call awaiting approval (see yiem pending): it runs, and its run resumes once no call of its batch waits. Exit code 1 when the call no longer waits or was decided already (a no-op)."
      : "Denies a tool call awaiting approval: the model reads the reason as the call's error result. Exit code 1 when the call no longer waits or was decided already (a no-op).",
    usage,
    options: [
      "      --by NAME      who decides (kept in the transcript)",
      ...(approved ? [] : ["      --reason TEXT  why (what the model reads)"]),
    ],
    async run(args, io) {
      const { values, positionals } = parseOrUsage(usage, () =>
        parseArgs({
          args,
          options: {
            by: { type: "string" },
            ...(approved ? {} : { reason: { type: "string" as const } }),
            help: { type: "boolean", short: "h" },
          },
          allowPositionals: true,
          strict: true,
        }),
      );
      if (values.help) {
        writeLine(io.stdout, commandHelp(command));
        return EXIT.ok;
      }
      const [sessionId = "", callKey = ""] = expectPositionals(usage, positionals, [
        "SESSION",
        "CALL",
      ]);
      const options = {
        by: typeof values.by === "string" ? values.by : undefined,
        reason: "reason" in values && typeof values.reason === "string" ? values.reason : undefined,
      };
      const result = await withCluster(io.env, ({ client }) =>
        approved
          ? client.approve(sessionId, callKey, options)
          : client.deny(sessionId, callKey, options),
      );
      const verb = approved ? "Approved" : "Denied";
      const next = result.resumed ? "its run resumes" : "other calls of its batch still wait";
      writeLine(
        io.stdout,
        escapeControlChars(`${verb} call ${callKey} of session ${sessionId}: ${next}.`),
      );
      return EXIT.ok;
    },
  };
  return command;
}

/** `yiem approve`: approves a tool call awaiting approval. */
export const approveCommand = decisionCommand(true);

/** `yiem deny`: denies a tool call awaiting approval, with a reason for the model. */
export const denyCommand = decisionCommand(false);
