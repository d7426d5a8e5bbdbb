/**
 * The one workload every system runs: an agent run of two streamed model calls (the `openai`
 * SDK against the repo's scripted OpenAI-compatible server) and, between them, two parallel
 * calls of the tool `step`, each in a worker process apart from the orchestrator. Each call of
 * `step` appends one line (`<run>:<label>`) to the side-effects file, so the kill tests can count
 * tools that ran twice; in the tool-worker kill test it works 300 ms first.
 */
import { appendFileSync } from "node:fs";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import OpenAI from "openai";

/** The tool the scripted model calls, twice per run. */
export const STEP_TOOL = "step";
/** The model's final answer. */
export const FINAL_ANSWER = "done";
/** The model name every system sends. */
export const MODEL = "scripted-model";

/** One tool call the model asked for. */
export interface StepCall {
  id: string;
  run: string;
  label: string;
}

/** A message of the agent's conversation, as the Chat Completions API takes it. */
export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * The scripted model: a request ending with tool results gets the final answer; any other gets
 * two parallel calls of `step` whose arguments carry the run's key (the user's message).
 */
export function replyTo(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role?: string; content?: unknown }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: FINAL_ANSWER };
  const run = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return {
    kind: "toolCalls",
    calls: ["a", "b"].map((label) => ({
      id: `call_${label}`,
      name: STEP_TOOL,
      arguments: { run, label },
    })),
  };
}

/** The `step` tool's JSON schema, as the Chat Completions API takes it. */
const STEP_SCHEMA: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: STEP_TOOL,
    description: "Records one step of a run",
    parameters: {
      type: "object",
      properties: { run: { type: "string" }, label: { type: "string" } },
      required: ["run", "label"],
    },
  },
};

/** What one streamed model call gave: its text and the tool calls it asked for. */
export interface ModelTurn {
  text: string;
  calls: StepCall[];
}

/** An `openai` client of the scripted server at `baseURL`, on the SDK's defaults (2 retries). */
export function openModel(baseURL: string): OpenAI {
  return new OpenAI({ baseURL, apiKey: "sk-bench-peers" });
}

/** One streamed chat completion with the `step` tool, its deltas assembled. */
export async function callModel(client: OpenAI, messages: ChatMessage[]): Promise<ModelTurn> {
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages,
    tools: [STEP_SCHEMA],
    stream: true,
  });
  let text = "";
  const calls: Array<{ id: string; args: string }> = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    text += delta?.content ?? "";
    for (const call of delta?.tool_calls ?? []) {
      const slot = calls[call.index] ?? { id: "", args: "" };
      calls[call.index] = slot;
      slot.id ||= call.id ?? "";
      slot.args += call.function?.arguments ?? "";
    }
  }
  return {
    text,
    calls: calls.map(({ id, args }) => ({
      id,
      ...(JSON.parse(args) as { run: string; label: string }),
    })),
  };
}

/** The first messages of run `run`: its key is the user's message. */
export function firstMessages(run: string): ChatMessage[] {
  return [{ role: "user", content: run }];
}

/** The messages of the second model call: the first turn's calls and their results appended. */
export function secondMessages(run: string, turn: ModelTurn, results: string[]): ChatMessage[] {
  return [
    ...firstMessages(run),
    {
      role: "assistant",
      content: turn.text || null,
      tool_calls: turn.calls.map((call) => ({
        id: call.id,
        type: "function" as const,
        function: {
          name: STEP_TOOL,
          arguments: JSON.stringify({ run: call.run, label: call.label }),
        },
      })),
    },
    ...turn.calls.map((call, i) => ({
      role: "tool" as const,
      tool_call_id: call.id,
      content: results[i] ?? "",
    })),
  ];
}

/** Runs of the tool-worker kill test carry this in their key (its tag is `<system>-worker-kill`). */
export const SLOW_STEP_MARK = "-worker-kill-";
/** How long `step` works in a run of the tool-worker kill test before its side effect, in ms. */
export const SLOW_STEP_MS = 300;

/**
 * The tool's body: appends `<run>:<label>` to the side-effects file and answers "ok". In a run
 * of the tool-worker kill test (its key holds {@link SLOW_STEP_MARK}) it first works
 * {@link SLOW_STEP_MS}, so a kill lands on calls being run; the side effect is the call's last
 * act, so a call killed before it and run again writes it once.
 */
export async function runStep(
  effectsFile: string,
  call: { run: string; label: string },
): Promise<string> {
  if (call.run.includes(SLOW_STEP_MARK)) await new Promise((r) => setTimeout(r, SLOW_STEP_MS));
  appendFileSync(effectsFile, `${call.run}:${call.label}\n`);
  return "ok";
}

/**
 * The whole agent loop with a system's own ways of making a model call durable and of running
 * the tool calls: model, both tools at once, model.
 */
export async function runAgent(
  run: string,
  ops: {
    model: (messages: ChatMessage[]) => Promise<ModelTurn>;
    tools: (calls: StepCall[]) => Promise<string[]>;
  },
): Promise<string> {
  const first = await ops.model(firstMessages(run));
  const results = await ops.tools(first.calls);
  const second = await ops.model(secondMessages(run, first, results));
  return second.text;
}
