import type { ProviderLimitState } from "@yiem/core/client";
import { withCluster } from "../cluster.js";
import { EXIT } from "../errors.js";
import { writeLine } from "../io.js";
import { escapeControlChars, formatJsonLine } from "../terminalText.js";
import { type Command, expectPositionals, parseListingArgs } from "./command.js";
import { formatTable } from "./workers.js";

const USAGE = "yiem limits [--json]";

/** `1.2 s`, `45 s`, `3 min`. */
function duration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  return seconds < 120 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`;
}

/** `used/limit`, or just `used` when the limit counts none. */
function share(used: number, limit: number): string {
  return limit > 0 ? `${used}/${limit}` : String(used);
}

/**
 * The limits as table lines: name, requests and tokens of the last window against the
 * limit's, the window, the 429 pause still to run, and how many calls wait.
 */
export function limitTable(states: ProviderLimitState[]): string[] {
  const header = ["LIMIT", "REQUESTS", "TOKENS", "WINDOW", "PAUSED", "WAITING"];
  const rows = states.map((s) =>
    [
      s.limit.name,
      share(s.recentRequests, s.limit.requests),
      share(s.recentTokens, s.limit.tokens),
      duration(s.limit.windowMs),
      s.pausedForMs > 0 ? `for ${duration(s.pausedForMs)}` : "no",
      String(s.waitingCount),
    ].map(escapeControlChars),
  );
  return formatTable([header, ...rows]);
}

/**
 * Who waits for what: one line per waiting model call (limit, coordinator, agent, tokens
 * asked for, its place in the limit's line), in line order, and how many more a limit has
 * past those listed.
 */
export function waitingTable(states: ProviderLimitState[]): string[] {
  const header = ["WAITING CALL OF", "LIMIT", "AGENT", "TOKENS", "PLACE"];
  const rows = states.flatMap((s) =>
    s.waiting.map((call) =>
      [
        call.coordinatorId ?? call.callId,
        s.limit.name,
        call.agent ?? "?",
        String(call.tokens),
        String(call.place + 1),
      ].map(escapeControlChars),
    ),
  );
  const more = states
    .filter((s) => s.waitingCount > s.waiting.length)
    .map((s) =>
      escapeControlChars(`… and ${s.waitingCount - s.waiting.length} more under ${s.limit.name}`),
    );
  return [...formatTable([header, ...rows]), ...more];
}

/** `yiem limits`: the shared provider limits and the model calls waiting under them. */
export const limitsCommand: Command = {
  name: "limits",
  summary:
    "Lists the shared provider limits (YIEM_MODEL_LIMITS) as Redis holds them across every coordinator: requests and tokens of the last window, a 429's pause, and the model calls waiting for their turn (coordinator, agent, tokens, place in line).",
  usage: USAGE,
  options: ["      --json         the limits as one JSON array"],
  async run(args, io) {
    const parsed = parseListingArgs(limitsCommand, args, io);
    if (!parsed) return EXIT.ok;
    const { json, positionals } = parsed;
    expectPositionals(USAGE, positionals, []);
    const states = await withCluster(io.env, ({ client }) => client.providerLimits());
    if (json) writeLine(io.stdout, formatJsonLine(states));
    else if (states.length === 0)
      writeLine(io.stdout, "No provider limits (a coordinator lists them with YIEM_MODEL_LIMITS).");
    else {
      for (const line of limitTable(states)) writeLine(io.stdout, line);
      if (states.some((s) => s.waitingCount > 0)) {
        writeLine(io.stdout, "");
        for (const line of waitingTable(states)) writeLine(io.stdout, line);
      }
    }
    return EXIT.ok;
  },
};
