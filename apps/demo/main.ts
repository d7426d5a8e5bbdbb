/**
 * `npm run demo`: a Yiem cluster on this machine — a Redis, one coordinator and three tool
 * workers as separate processes — answers a question whose tool calls run in parallel on
 * different workers, shown live. Offline (no OPENAI_BASE_URL) a scripted model answers.
 * Keeps running (Bull Board stays up) until Ctrl-C; `--once` exits after the answer.
 * Usage: npm run demo -- [--once] ["your question"]
 */
import { randomUUID } from "node:crypto";
import { type AssistantMessage, readGivenSetting, readSetting, YiemClient } from "@yiem/core";
import { startScriptedModelServer } from "@yiem/testing";
import { createEventRenderer } from "../cli/src/renderEvents.js";
import { startDemoCluster } from "./demoCluster.js";
import { startDemoRedis } from "./demoRedis.js";
import { startFakeWeather } from "./fakeWeather.js";
import { createScriptedBrain } from "./scriptedBrain.js";
import { startStatusPage } from "./statusPage.js";

const DEFAULT_QUESTION =
  "What's the weather and the time in Tokyo, London and New York, and what does our status page say?";

type Closer = () => Promise<unknown>;

/** The model settings for the processes: a real model from the environment, or the scripted one. */
async function modelEnv(statusUrl: string, closers: Closer[]): Promise<Record<string, string>> {
  const baseUrl = readGivenSetting("openaiBaseUrl");
  if (baseUrl || readGivenSetting("openaiApiKey")) {
    console.log(`Model: ${readSetting("model")} at ${baseUrl ?? "the OpenAI API"}`);
    return {};
  }
  const model = await startScriptedModelServer({ respond: createScriptedBrain(statusUrl) });
  const weather = await startFakeWeather();
  closers.push(
    () => model.close(),
    () => weather.close(),
  );
  console.log(
    "Offline: a scripted model is answering, and a local stand-in for Open-Meteo serves the weather.",
  );
  console.log("         (set OPENAI_BASE_URL, OPENAI_API_KEY and YIEM_MODEL for a real model)");
  return {
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "offline",
    YIEM_MODEL: "scripted-model",
    YIEM_WEATHER_BASE_URL: weather.url,
    YIEM_GEOCODING_BASE_URL: weather.url,
  };
}

function answerText(response: AssistantMessage): string {
  const text = response.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
  return text || `(no answer: ${response.stopReason} ${response.errorMessage ?? ""})`;
}

/** Sends the question and renders its events live until the run ends. */
async function ask(client: YiemClient, question: string): Promise<AssistantMessage> {
  const sessionId = randomUUID();
  const renderer = createEventRenderer();
  const watching = (async () => {
    for await (const event of client.events(sessionId, { untilAgentEnd: true }))
      renderer.handle(event, { workerId: event.workerId, ts: event.ts });
  })();
  const { runId } = await client.send(question, { sessionId });
  await watching;
  renderer.stop();
  return client.waitForResponse(runId, { timeoutMs: 30_000 });
}

/** `NAME=value` pairs for a shell line. */
function envAssignments(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(" ");
}

async function main(): Promise<void> {
  const once = process.argv.includes("--once");
  const question =
    process.argv
      .slice(2)
      .filter((arg) => !arg.startsWith("--"))
      .join(" ") || DEFAULT_QUESTION;
  const closers: Closer[] = [];
  const stopAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stopAll().then(() => process.exit(0)));
  }
  try {
    const redis = await startDemoRedis();
    closers.push(redis.stop);
    console.log(`Redis: ${redis.source}`);
    const statusPage = await startStatusPage();
    closers.push(statusPage.close);
    const env = {
      ...redis.env,
      YIEM_PREFIX: redis.prefix,
      YIEM_SYSTEM_PROMPT: `You are a helpful assistant. The team's status page is ${statusPage.url}.`,
      // httpFetch is opt-in, and refuses loopback unless allowed: the status page is local.
      YIEM_BUILTIN_TOOLS: "getTime,getWeather,httpFetch",
      YIEM_HTTP_FETCH_ALLOW: `${new URL(statusPage.url).hostname}/32`,
      ...(await modelEnv(statusPage.url, closers)),
    };
    const cluster = await startDemoCluster(env);
    closers.push(cluster.stop);
    console.log(
      `Cluster: 1 coordinator (pid ${cluster.coordinator.pid}), ${cluster.workers.length} tool workers. Bull Board: ${cluster.boardUrl}`,
    );
    const client = new YiemClient({ redis: redis.target, prefix: redis.prefix });
    closers.push(() => client.close());
    console.log(`\n> ${question}\n`);
    const started = Date.now();
    const response = await ask(client, question);
    console.log(
      `\n${answerText(response)}\n\n${response.stopReason} in ${Date.now() - started} ms`,
    );
    if (!once) {
      console.log(`\nThe cluster keeps running: Bull Board at ${cluster.boardUrl}`);
      console.log(
        `Send more: ${envAssignments(redis.env)} YIEM_PREFIX=${redis.prefix} npm run yiem -- send "…"   (Ctrl-C to stop)`,
      );
      return;
    }
  } catch (err) {
    console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
  await stopAll();
}

void main();
