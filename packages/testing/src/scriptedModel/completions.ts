import type {
  ChatCompletionRequestBody,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedUsage,
} from "./types.js";

type TextReply = Extract<ScriptedReply, { kind: "text" }>;
type ToolCallsReply = Extract<ScriptedReply, { kind: "toolCalls" }>;

/** What every generated response needs to know about its request. */
export interface ResponseContext {
  id: string;
  model: string;
  requestIndex: number;
  body: ChatCompletionRequestBody;
  /** Whether the request's tool definitions count as prompt tokens (`ScriptedModelOptions.countToolTokens`). */
  countToolTokens?: boolean;
}

interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A rough token count: one token per four characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * A request's prompt tokens as the server estimates them: its messages, and its tool
 * definitions too when `countTools` (as providers count them).
 */
export function promptTokens(body: ChatCompletionRequestBody, countTools: boolean): number {
  const messages = estimateTokens(JSON.stringify(body.messages ?? []));
  return countTools && body.tools
    ? messages + estimateTokens(JSON.stringify(body.tools))
    : messages;
}

/**
 * The usage block for a request and the text the model produced: the reply's own `usage`
 * when it gives one (sent as is), else an estimate.
 */
export function usageFor(ctx: ResponseContext, output: string, given?: ScriptedUsage) {
  if (given) return given;
  const prompt_tokens = promptTokens(ctx.body, ctx.countToolTokens === true);
  const completion_tokens = estimateTokens(output);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** The wire form of scripted calls; missing ids become `call_scripted_<request>_<n>`. */
export function wireToolCalls(ctx: ResponseContext, calls: ScriptedToolCall[]): WireToolCall[] {
  return calls.map((call, n) => ({
    id: call.id ?? `call_scripted_${ctx.requestIndex}_${n}`,
    type: "function",
    function: {
      name: call.name,
      arguments:
        typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
}

/** All the text a reply produced, for usage counting. */
export function outputText(reply: TextReply | ToolCallsReply, calls: WireToolCall[]): string {
  if (reply.kind === "text") return (reply.thinking ?? "") + reply.text;
  return (reply.text ?? "") + calls.map((c) => c.function.name + c.function.arguments).join("");
}

/** A non-streamed `chat.completion` for a text reply. */
export function textCompletion(ctx: ResponseContext, reply: TextReply) {
  const message: Record<string, unknown> = { role: "assistant", content: reply.text };
  if (reply.thinking) message.reasoning_content = reply.thinking;
  const output = outputText(reply, []);
  return completion(ctx, message, reply.finishReason ?? "stop", usageFor(ctx, output, reply.usage));
}

/** A non-streamed `chat.completion` for a tool calls reply. */
export function toolCallsCompletion(ctx: ResponseContext, reply: ToolCallsReply) {
  const calls = wireToolCalls(ctx, reply.calls);
  const message = { role: "assistant", content: reply.text ?? null, tool_calls: calls };
  const usage = usageFor(ctx, outputText(reply, calls), reply.usage);
  return completion(ctx, message, "tool_calls", usage);
}

function completion(
  ctx: ResponseContext,
  message: Record<string, unknown>,
  finishReason: string,
  usage: ScriptedUsage,
) {
  return {
    id: ctx.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage,
  };
}
