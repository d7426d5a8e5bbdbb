import { loadModelScript } from "../modelScript/loadModelScript.js";
import { ModelScriptError } from "../modelScript/modelScriptError.js";
import { createScriptResponder, type ScriptDecision } from "../modelScript/scriptResponder.js";
import type { ModelScript } from "../modelScript/types.js";
import { startScriptedModelServer } from "../scriptedModel/scriptedModelServer.js";
import { type CommandLine, parseCommandLine, USAGE, UsageError } from "./commandLine.js";

const COMMAND = "yiem-scripted-model";

/**
 * Runs `yiem-scripted-model` with `args`: loads and checks the script, serves it until SIGTERM
 * or SIGINT, then closes every connection. Resolves with the exit code: 0 after a clean stop
 * or `--help`, 1 for a bad script or a server that cannot listen, 2 for a bad command line.
 * Prints the URL on start and one line per request to stdout, errors to stderr.
 */
export async function runScriptedModelCommand(args: string[]): Promise<number> {
  let commandLine: CommandLine;
  try {
    commandLine = parseCommandLine(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${COMMAND}: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (commandLine.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  try {
    await serve(commandLine);
    return 0;
  } catch (err) {
    const known = err instanceof ModelScriptError || isListenError(err);
    console.error(`${COMMAND}: ${known ? (err as Error).message : String(err)}`);
    return 1;
  }
}

async function serve(commandLine: Extract<CommandLine, { kind: "serve" }>): Promise<void> {
  const script = await loadModelScript(commandLine.script);
  const model = commandLine.model ?? script.model ?? "scripted-model";
  // Listening for the signals before printing the URL: whoever reads it may stop us at once.
  const stopSignal = nextStopSignal();
  const server = await startScriptedModelServer({
    host: commandLine.host,
    port: commandLine.port,
    model,
    respond: createScriptResponder(script, (decision) => console.log(describeDecision(decision))),
  }).catch((err: unknown) => {
    stopSignal.cancel();
    throw err;
  });
  console.log(
    `${COMMAND}: serving ${commandLine.script} (${describeScript(script)}) at ${server.baseURL}`,
  );
  console.log(`  OPENAI_BASE_URL=${server.baseURL} OPENAI_API_KEY=any YIEM_MODEL=${model}`);
  const signal = await stopSignal.received;
  await server.close();
  console.log(`${COMMAND}: stopped (${signal})`);
}

/** Resolves `received` on the first SIGTERM or SIGINT; `cancel` stops listening. */
function nextStopSignal(): { received: Promise<NodeJS.Signals>; cancel(): void } {
  let resolve: (signal: NodeJS.Signals) => void = () => {};
  const received = new Promise<NodeJS.Signals>((done) => {
    resolve = done;
  });
  const cancel = () => {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  };
  const stop = (signal: NodeJS.Signals) => {
    cancel();
    resolve(signal);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return { received, cancel };
}

function describeScript(script: ModelScript): string {
  const rules = `${script.rules.length} rule${script.rules.length === 1 ? "" : "s"}`;
  return script.default ? `${rules} and a default` : rules;
}

/** One log line: `#3 rule weather, step 1 of 2: tool calls getWeather, getTime`. */
function describeDecision(decision: ScriptDecision): string {
  const { reply } = decision;
  const where =
    decision.step === 0
      ? `rule ${decision.rule}`
      : `rule ${decision.rule}, step ${decision.step} of ${decision.stepCount}`;
  if (reply.kind === "toolCalls") {
    return `#${decision.requestIndex} ${where}: tool calls ${reply.calls.map((call) => call.name).join(", ")}`;
  }
  if (reply.kind === "httpError")
    return `#${decision.requestIndex} ${where}: HTTP ${reply.status} ${reply.message}`;
  return `#${decision.requestIndex} ${where}: text`;
}

/** Whether `err` is Node's failure to listen (port taken, host unknown, no permission). */
function isListenError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES" || code === "ENOTFOUND"
  );
}
