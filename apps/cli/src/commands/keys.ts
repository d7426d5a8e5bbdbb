import { appendFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { EXIT, UsageError } from "../errors.js";
import { writeLine } from "../io.js";
import { type Command, commandHelp, expectPositionals, parseOrUsage } from "./command.js";

const USAGE =
  "yiem keys create --name NAME --scopes submit,read,approve,admin [--agents A,B] [--sessions own|all] [--requests-per-minute N] [--runs-at-once N] [--file FILE]";

const SCOPES = ["submit", "read", "approve", "admin"];

/** The line of the gateway's keys file for a new key: its hash, never the key. */
interface KeyEntry {
  name: string;
  hash: string;
  scopes: string[];
  agents: string[];
  sessions: "own" | "all";
  requestsPerMinute?: number;
  runsAtOnce?: number;
}

/** A comma-separated list, without blanks. */
function listOf(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A positive whole number option, or `undefined` when unset. */
function positiveInt(text: string | undefined, option: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new UsageError(`${option} must be a positive whole number`, USAGE);
  return value;
}

/** The entry the options describe (without its hash), checked as the gateway checks it. */
function entryOf(values: Record<string, string | boolean | undefined>): Omit<KeyEntry, "hash"> {
  const name = String(values.name ?? "");
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    throw new UsageError("--name: 1–64 letters, digits, '.', '_' or '-'", USAGE);
  }
  const scopes = listOf(values.scopes as string | undefined);
  const unknown = scopes.find((scope) => !SCOPES.includes(scope));
  if (scopes.length === 0 || unknown !== undefined) {
    throw new UsageError(`--scopes: a comma-separated list of ${SCOPES.join(", ")}`, USAGE);
  }
  const sessions = String(values.sessions ?? "own");
  if (sessions !== "own" && sessions !== "all")
    throw new UsageError("--sessions: own or all", USAGE);
  const agents = listOf(values.agents as string | undefined);
  const requestsPerMinute = positiveInt(
    values["requests-per-minute"] as string | undefined,
    "--requests-per-minute",
  );
  const runsAtOnce = positiveInt(values["runs-at-once"] as string | undefined, "--runs-at-once");
  return {
    name,
    scopes,
    agents: agents.length > 0 ? agents : ["*"],
    sessions,
    ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
    ...(runsAtOnce !== undefined ? { runsAtOnce } : {}),
  };
}

/** `yiem keys create`: a new gateway API key, printed once, and the keys-file line with its hash. */
export const keysCommand: Command = {
  name: "keys",
  summary:
    "Creates an API key for the HTTP gateway: prints the key once (the gateway never stores it) and the line to add to the keys file (YIEM_API_KEYS), which holds only its hash; --file appends the line itself. Needs no cluster.",
  usage: USAGE,
  options: [
    "  --name NAME                 the key's name: owner of the sessions it starts, `by` of its decisions",
    "  --scopes LIST               submit (start and abort runs), read, approve, admin (everything, every session)",
    "  --agents LIST               the agents it may run (default: every agent)",
    "  --sessions own|all          the sessions it sees: the ones it started (default) or every one",
    "  --requests-per-minute N     its request rate (default 600)",
    "  --runs-at-once N            its runs unanswered at once (default 16)",
    "  --file FILE                 append the line to this keys file",
  ],
  async run(args, io) {
    const { values, positionals } = parseOrUsage(USAGE, () =>
      parseArgs({
        args,
        options: {
          help: { type: "boolean", short: "h" },
          name: { type: "string" },
          scopes: { type: "string" },
          agents: { type: "string" },
          sessions: { type: "string" },
          "requests-per-minute": { type: "string" },
          "runs-at-once": { type: "string" },
          file: { type: "string" },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (values.help) {
      writeLine(io.stdout, commandHelp(keysCommand));
      return EXIT.ok;
    }
    const [action] = expectPositionals(USAGE, positionals, ["create"]);
    if (action !== "create") throw new UsageError(`unknown keys action "${action}"`, USAGE);
    const entry = entryOf(values);
    const { createApiKey } = await import("@yiem/core/client");
    const { key, hash } = createApiKey();
    const { name, ...rest } = entry;
    const line = JSON.stringify({ name, hash, ...rest });
    writeLine(io.stdout, `key: ${key}`);
    writeLine(io.stdout, "(shown once: give it to its user now; the gateway keeps only its hash)");
    if (values.file) {
      await appendFile(values.file, `${line}\n`);
      writeLine(io.stdout, `added to ${values.file}:`);
    } else {
      writeLine(io.stdout, "add this line to the keys file (YIEM_API_KEYS):");
    }
    writeLine(io.stdout, line);
    return EXIT.ok;
  },
};
