import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import {
  type AgentEndEvent,
  type AssistantMessage,
  type BusEvent,
  type RunBudget,
  whenEventsLive,
} from "@yiem/core/client";
import { type ClusterSession, probeSession, withCluster } from "../cluster.js";
import { EXIT, UsageError } from "../errors.js";
import { type CliIo, parseSeconds, writeLine } from "../io.js";
import { type BusPrinter, createBusPrinter, isFailedRun, responseLines } from "../output.js";
import { formatJsonLine } from "../terminalText.js";
import { watchWorkers } from "../workerWatch.js";
import { type Command, commandHelp, parseOrUsage } from "./command.js";
import { startRunGuard } from "./runGuard.js";

const USAGE =
  'yiem send "message" [--agent NAME] [--session ID] [--follow-up] [--budget JSON] [--tenant NAME] [--json] [--timeout SECONDS]';

const OPTIONS = {
  agent: { type: "string", short: "a" },
  session: { type: "string", short: "s" },
  "follow-up": { type: "boolean" },
  budget: { type: "string" },
  tenant: { type: "string" },
  json: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

interface SendOptions {
  message: string;
  agent?: string;
  sessionId?: string;
  followUp: boolean;
  budget?: RunBudget;
  tenant?: string;
  json: boolean;
  timeoutS?: number;
}

/**
 * The run a send follows: its session, its request's id (`runId` the same id, its older name,
 * kept in `--json` output), and the last event that came before it.
 */
interface FollowedRun {
  sessionId: string;
  requestId: string;
  runId: string;
  baseline: number;
}

/** `--budget`'s JSON as a budget (the client checks its limits, naming a bad one). */
function parseBudget(json: string | undefined): RunBudget | undefined {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as RunBudget;
  } catch (err) {
    throw new UsageError(`--budget is not JSON: ${(err as Error).message}`, USAGE);
  }
}

function readSendOptions(args: string[]): SendOptions | undefined {
  const { values, positionals } = parseOrUsage(USAGE, () =>
    parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true }),
  );
  if (values.help) return undefined;
  const message = positionals.join(" ").trim();
  if (!message) throw new UsageError("missing the message to send", USAGE);
  return {
    message,
    agent: values.agent,
    sessionId: values.session,
    followUp: values["follow-up"] ?? false,
    budget: parseBudget(values.budget),
    tenant: values.tenant,
    json: values.json ?? false,
    timeoutS: parseSeconds(values.timeout, "--timeout"),
  };
}

function isEndOf(event: BusEvent, requestId: string): event is BusEvent & AgentEndEvent {
  return (
    event.type === "agentEnd" &&
    (event.runId === requestId || (event.inputIds ?? []).includes(requestId))
  );
}

/**
 * Follows the run's events from before its send (`send`, called once they are live), printing
 * those after `baseline` until its `agentEnd`, and names a worker that stops mid-call; resolves
 * with its response.
 */
async function followRun(
  { client, config }: ClusterSession,
  run: FollowedRun,
  options: SendOptions,
  printer: BusPrinter,
  send: () => Promise<void>,
): Promise<AssistantMessage> {
  const isHeld = async () => (await probeSession(config, run.sessionId)).held;
  const refusal = () => client.requestRefusal(run.requestId);
  const { coordinatorWaitS } = config; // YIEM_COORDINATOR_WAIT_S
  const guard = startRunGuard({
    ...options,
    coordinatorWaitS,
    sessionId: run.sessionId,
    isHeld,
    refusal,
  });
  const stopWatchingWorkers = watchWorkers({
    list: () => client.workers(),
    inUse: () => printer.workersInUse(),
    report: (live, draining) => printer.checkWorkers(live, draining),
  });
  const stop = new AbortController();
  try {
    const opened = await whenEventsLive((onLive) => ({
      stream: client.events(run.sessionId, {
        fromStart: true, // with `baseline`: nothing published after the send can be missed
        untilAgentEnd: true,
        requestId: run.requestId,
        signal: AbortSignal.any([guard.signal, stop.signal]),
        onLive,
      }),
      close: () => stop.abort(),
    }));
    if (!opened) throw guard.failure(); // never: no time limit
    await send();
    for await (const event of opened.stream) {
      if (event.seq <= run.baseline) continue;
      guard.sawEvent();
      if (options.followUp && event.runId !== run.requestId) {
        printer.status("waiting for the session's current run to end…"); // the run before ours
        continue;
      }
      printer.event(event);
      if (isEndOf(event, run.requestId)) return event.response;
    }
    throw guard.failure();
  } finally {
    stop.abort(); // a read still pending (a send that failed) ends too
    stopWatchingWorkers();
    guard.dispose();
  }
}

function printResult(
  io: CliIo,
  sessionId: string,
  response: AssistantMessage,
  ms: number,
  shown: boolean,
): void {
  for (const line of responseLines(response, ms, shown)) writeLine(io.stdout, line);
  writeLine(io.stdout, `session ${sessionId}  (follow up: yiem send --session ${sessionId} "…")`);
}

async function sendAndFollow(
  cluster: ClusterSession,
  options: SendOptions,
  io: CliIo,
): Promise<number> {
  const sessionId = options.sessionId ?? randomUUID();
  const baseline = options.sessionId
    ? (await probeSession(cluster.config, sessionId)).latestSeq
    : 0;
  const started = Date.now();
  const sendOptions = {
    agent: options.agent,
    sessionId,
    followUp: options.followUp,
    budget: options.budget,
    tenant: options.tenant,
  };
  const requestId = randomUUID();
  const run: FollowedRun = { sessionId, requestId, runId: requestId, baseline };
  const printer = createBusPrinter({ json: options.json, out: io.stdout, runEvents: false });
  printer.print(`session ${sessionId}`);
  const send = async () => {
    await cluster.client.send(options.message, { ...sendOptions, requestId });
    printer.status("waiting for a coordinator…");
  };
  const response = await followRun(cluster, run, options, printer, send).finally(() =>
    printer.stop(),
  );
  if (options.json) writeLine(io.stdout, formatJsonLine({ type: "response", ...run, response }));
  else printResult(io, sessionId, response, Date.now() - started, printer.answerShown(response));
  return isFailedRun(response) ? EXIT.runFailed : EXIT.ok;
}

/** `yiem send`: sends a message and shows its run live until the answer. */
export const sendCommand: Command = {
  name: "send",
  summary:
    "Sends a message to a session (a new one by default), shows each tool call live (progress, worker, duration; a worker that stops mid-call is named) and the answer as the model writes it. Exit code 1 when the run ends with an error or is aborted.",
  usage: USAGE,
  options: [
    "  -a, --agent NAME   the agent that answers (default: the session's current agent; for a new session, `default` or the only agent)",
    "  -s, --session ID   send to this session (default: a new one; its id is printed)",
    "      --follow-up    a follow-up: its own run after the session's current one",
    "      --budget JSON  this request's own limits, e.g. '{\"maxModelCalls\": 5}' (lowers, never raises)",
    "      --tenant NAME  the tenant the session's runs are made for (its fair share, its budget per day)",
    "      --json         one JSON line per event, then the response as JSON",
    "      --timeout S    give up waiting after S seconds (the run goes on; exit code 1)",
    "",
    "Environment: REDIS_URL, YIEM_PREFIX, YIEM_COORDINATOR_WAIT_S (default 10).",
  ],
  async run(args, io) {
    const options = readSendOptions(args);
    if (!options) {
      writeLine(io.stdout, commandHelp(sendCommand));
      return EXIT.ok;
    }
    return withCluster(io.env, (cluster) => sendAndFollow(cluster, options, io));
  },
};
