/**
 * `npm run demo`: an agent with the built-in tools answers a question whose tool calls run
 * in parallel, showing each call live. Offline (no OPENAI_BASE_URL) a scripted model answers.
 * Usage: npm run demo -- [--once] ["your question"]
 */
import { createOpenAILlmCall, type LlmCall, YiemAgent } from "@yiem/core";
import { getBuiltinTools } from "@yiem/tools";
import { startScriptedModelServer } from "../../test/support/scriptedModelServer.js";
import { createEventRenderer } from "../cli/src/renderEvents.js";
import { createScriptedBrain } from "./scriptedBrain.js";
import { startStatusPage } from "./statusPage.js";

const DEFAULT_QUESTION =
  "What time is it in Tokyo, London and New York, and what does our status page say?";

async function chooseModel(
  statusUrl: string,
): Promise<{ llmCall: LlmCall; close(): Promise<void> }> {
  if (process.env.OPENAI_BASE_URL || process.env.OPENAI_API_KEY) {
    const model = process.env.YIEM_MODEL ?? "gpt-4o-mini";
    console.log(`Model: ${model} at ${process.env.OPENAI_BASE_URL ?? "the OpenAI API"}`);
    return { llmCall: createOpenAILlmCall({ model, stream: true }), close: async () => {} };
  }
  const server = await startScriptedModelServer({ respond: createScriptedBrain(statusUrl) });
  console.log(
    "Offline: a scripted model is answering (set OPENAI_BASE_URL and YIEM_MODEL for a real one).",
  );
  const llmCall = createOpenAILlmCall({
    model: "scripted-model",
    baseURL: server.baseURL,
    apiKey: "offline",
    stream: true,
  });
  return { llmCall, close: () => server.close() };
}

async function main(): Promise<void> {
  const question =
    process.argv
      .slice(2)
      .filter((arg) => !arg.startsWith("--"))
      .join(" ") || DEFAULT_QUESTION;
  const statusPage = await startStatusPage();
  const model = await chooseModel(statusPage.url);
  const renderer = createEventRenderer();
  const agent = new YiemAgent({
    llmCall: model.llmCall,
    tools: getBuiltinTools(),
    systemPrompt: `You are a helpful assistant. The team's status page is ${statusPage.url}.`,
    agentEventSink: (event) => renderer.handle(event),
  });
  console.log(`\n> ${question}\n`);
  const started = Date.now();
  agent.run(question);
  const response = await agent.takeResponse();
  renderer.stop();
  const text = response.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
  console.log(`\n${text || `(no answer: ${response.stopReason} ${response.errorMessage ?? ""})`}`);
  console.log(`\n${response.stopReason} in ${Date.now() - started} ms`);
  await agent.shutdown();
  await model.close();
  await statusPage.close();
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
