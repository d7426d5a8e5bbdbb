import { outputText, type ResponseContext, usageFor, wireToolCalls } from "./completions.js";
import type { ScriptedReply, ScriptedUsage } from "./types.js";

type TextReply = Extract<ScriptedReply, { kind: "text" }>;
type ToolCallsReply = Extract<ScriptedReply, { kind: "toolCalls" }>;
type Delta = Record<string, unknown>;

/**
 * Splits `text` into at most `count` pieces of near-equal length (by code point, so no
 * surrogate pair is cut). An empty text gives one empty piece.
 */
export function splitInto(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let start = 0; start < chars.length; start += size) {
    pieces.push(chars.slice(start, start + size).join(""));
  }
  return pieces.length > 0 ? pieces : [""];
}

/** The `chat.completion.chunk`s of a streamed text reply, usage chunk included when asked. */
export function textChunks(ctx: ResponseContext, reply: TextReply): object[] {
  const deltas: Delta[] = [{ role: "assistant", content: "" }];
  if (reply.thinking) {
    for (const piece of splitInto(reply.thinking, 3)) deltas.push({ reasoning_content: piece });
  }
  for (const piece of splitInto(reply.text, reply.textChunks ?? 4)) deltas.push({ content: piece });
  const usage = usageFor(ctx, outputText(reply, []), reply.usage);
  return finishChunks(ctx, deltas, reply.finishReason ?? "stop", usage);
}

/**
 * The chunks of a streamed tool calls reply. Calls are interleaved round-robin: each call's
 * first delta carries `index`, `id`, `type`, `function.name` and the first arguments piece;
 * later deltas carry only `index` and the next piece (`argumentChunks` pieces per call).
 */
export function toolCallChunks(ctx: ResponseContext, reply: ToolCallsReply): object[] {
  const calls = wireToolCalls(ctx, reply.calls);
  const deltas: Delta[] = [{ role: "assistant", content: null }];
  if (reply.text) for (const piece of splitInto(reply.text, 2)) deltas.push({ content: piece });
  const pieces = calls.map((call) => splitInto(call.function.arguments, reply.argumentChunks ?? 1));
  const rounds = Math.max(0, ...pieces.map((p) => p.length));
  for (let round = 0; round < rounds; round++) {
    calls.forEach((call, index) => {
      const piece = pieces[index]?.[round];
      if (piece === undefined) return;
      const delta: Delta = { index, function: { arguments: piece } };
      if (round === 0) {
        Object.assign(delta, { id: call.id, type: "function" });
        delta.function = { name: call.function.name, arguments: piece };
      }
      deltas.push({ tool_calls: [delta] });
    });
  }
  return finishChunks(
    ctx,
    deltas,
    "tool_calls",
    usageFor(ctx, outputText(reply, calls), reply.usage),
  );
}

function finishChunks(
  ctx: ResponseContext,
  deltas: Delta[],
  finishReason: string,
  usage: ScriptedUsage,
): object[] {
  const chunks: object[] = deltas.map((delta) => chunk(ctx, [choice(delta, null)]));
  chunks.push(chunk(ctx, [choice({}, finishReason)]));
  if (ctx.body.stream_options?.include_usage) {
    chunks.push({ ...chunk(ctx, []), usage });
  }
  return chunks;
}

function choice(delta: Delta, finishReason: string | null) {
  return { index: 0, delta, finish_reason: finishReason, logprobs: null };
}

function chunk(ctx: ResponseContext, choices: object[]) {
  return {
    id: ctx.id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices,
  };
}
