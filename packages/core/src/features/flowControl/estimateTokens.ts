import type { LlmRequest } from "../../types/index.js";

/**
 * A request's input tokens, estimated before it is sent: a token per four characters of its
 * messages, tools and response format as JSON (at least 1). Rough on purpose: the answer's
 * usage corrects it (`ProviderLimit.settle`).
 *
 * @example estimateInputTokens({ messages: [{ role: "user", content: "hi" }], tools: [] }) // 9
 */
export function estimateInputTokens(request: LlmRequest): number {
  const json = JSON.stringify([request.messages, request.tools, request.responseFormat ?? null]);
  return Math.max(1, Math.ceil(json.length / 4));
}
