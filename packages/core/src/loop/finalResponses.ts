import type { AgentToolCallBatch, AssistantMessage, TextContent } from "../types/index.js";

/**
 * The final response of a run whose last batch asked to terminate (lifecycle §10):
 * "Tool execution completed." followed by the text of every tool result, the model metadata
 * of the assistant message that asked for the batch, `stopReason: "toolUseTerminated"`, and
 * an `errorMessage` when any call failed.
 */
export function buildTerminatedResponse(
  batch: AgentToolCallBatch,
  response: AssistantMessage,
): AssistantMessage {
  const content: TextContent[] = [{ type: "text", text: "Tool execution completed." }];
  for (const message of batch.messages) {
    for (const block of message.content) if (block.type === "text") content.push(block);
  }
  const final: AssistantMessage = {
    role: "assistant",
    content,
    stopReason: "toolUseTerminated",
    timestamp: Date.now(),
  };
  if (response.api) final.api = response.api;
  if (response.provider) final.provider = response.provider;
  if (response.model) final.model = response.model;
  if (response.usage) final.usage = response.usage;
  if (batch.messages.some((message) => message.isError)) {
    final.errorMessage = "One or more tool calls failed";
  }
  return final;
}

/** A final response that carries no model output: an abort, a failure, a turn limit. */
export function buildStopResponse(
  stopReason: "aborted" | "error",
  errorMessage: string,
): AssistantMessage {
  return { role: "assistant", content: [], stopReason, errorMessage, timestamp: Date.now() };
}
