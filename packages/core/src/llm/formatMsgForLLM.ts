import type {
  AgentContext,
  AgentMessage,
  AssistantMessage,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  LlmRequest,
  MessageContent,
  ToolCallContent,
  ToolResultMessage,
  UserMessage,
} from "../types/index.js";

/**
 * Turns an agent context into an OpenAI Chat Completions request: `{messages, tools}`.
 *
 * Pure and total (never throws). The system prompt (when non-empty) comes first; user
 * messages keep their text and images; assistant messages keep their text and tool calls
 * (thinking is never sent back); tool results become `role: "tool"` messages with string
 * content. An assistant message that failed (`stopReason` `error` / `aborted`) with neither
 * text nor tool calls is skipped, since OpenAI rejects empty assistant messages.
 *
 * @example
 * formatMsgForLLM({ systemPrompt: "Be brief.", messages: [userMsg], tools: new Map() })
 * // { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }], tools: [] }
 */
export function formatMsgForLLM(ctx: AgentContext): LlmRequest {
  const messages: ChatMessage[] = [];
  if (ctx.systemPrompt) messages.push({ role: "system", content: ctx.systemPrompt });
  for (const message of ctx.messages) {
    const formatted = formatMessage(message);
    if (formatted) messages.push(formatted);
  }
  return { messages, tools: formatTools(ctx) };
}

function formatMessage(message: AgentMessage): ChatMessage | undefined {
  switch (message.role) {
    case "user":
      return formatUserMessage(message);
    case "assistant":
      return formatAssistantMessage(message);
    case "toolResult":
      return formatToolResultMessage(message);
    default:
      return undefined;
  }
}

function formatUserMessage(message: UserMessage): ChatMessage {
  const [first] = message.content;
  if (message.content.length === 1 && first?.type === "text") {
    return { role: "user", content: first.text };
  }
  return { role: "user", content: message.content.map(toContentPart) };
}

function toContentPart(block: MessageContent): ChatContentPart {
  if (block.type === "image") {
    return { type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
  }
  return { type: "text", text: block.text };
}

function formatAssistantMessage(message: AssistantMessage): ChatMessage | undefined {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "toolCall") toolCalls.push(toChatToolCall(block));
  }
  const failed = message.stopReason === "error" || message.stopReason === "aborted";
  if (failed && texts.length === 0 && toolCalls.length === 0) return undefined;
  const content = texts.length > 0 ? texts.join("") : null;
  if (toolCalls.length === 0) return { role: "assistant", content };
  return { role: "assistant", content, tool_calls: toolCalls };
}

function toChatToolCall(block: ToolCallContent): ChatToolCall {
  return {
    id: block.id,
    type: "function",
    function: {
      name: block.name,
      arguments: block.rawArguments ?? JSON.stringify(block.arguments),
    },
  };
}

function formatToolResultMessage(message: ToolResultMessage): ChatMessage {
  const content = message.content
    .map((block) => (block.type === "text" ? block.text : `[image ${block.mimeType}]`))
    .join("\n");
  return { role: "tool", tool_call_id: message.toolCallId, content };
}

function formatTools(ctx: AgentContext): ChatTool[] {
  return [...ctx.tools.values()].map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}
