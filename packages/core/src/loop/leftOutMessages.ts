import type {
  AssistantContent,
  AssistantMessage,
  ToolCallContent,
  ToolResultMessage,
} from "../types/index.js";
import { messageBytes } from "./contextSize.js";

/** Parts smaller than this stay as they are: their placeholder would save next to nothing. */
const KEEP_BELOW_BYTES = 256;

function bytesOf(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * A tool result as the model sees it once it was left out of the context for size: the same
 * call id, tool name and error flag (so its call still has its result), its content replaced
 * by one line saying so, with the size of the message left out. `details` (never sent to the
 * model) is dropped.
 *
 * @example leaveOutToolResult(result).content // [{ type: "text", text: "[tool result left out of the context for size: 28781 bytes]" }]
 */
export function leaveOutToolResult(message: ToolResultMessage): ToolResultMessage {
  const text = `[tool result left out of the context for size: ${messageBytes(message)} bytes]`;
  return { ...message, content: [{ type: "text", text }], details: {} };
}

/** A tool call with its arguments replaced by a note of their size; id and name stay. */
function leaveOutArguments(block: ToolCallContent): ToolCallContent {
  const bytes = bytesOf(block.rawArguments ?? JSON.stringify(block.arguments));
  if (bytes < KEEP_BELOW_BYTES) return block;
  const note = `${bytes} bytes of arguments, left out of the context for size`;
  return { type: "toolCall", id: block.id, name: block.name, arguments: { leftOut: note } };
}

/**
 * An earlier answer of the model as it is sent once it was left out of the context for size:
 * its text replaced by one line with the size left out (thinking, never sent back, dropped),
 * and each tool call kept with its id and name, its arguments replaced by a note of their size
 * (`{ leftOut: "… bytes of arguments, left out of the context for size" }`), so every call
 * still pairs with its result. Small text and small arguments stay as they are.
 */
export function leaveOutAnswer(message: AssistantMessage): AssistantMessage {
  const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const textBytes = bytesOf(text.join(""));
  const content: AssistantContent[] = [];
  if (textBytes >= KEEP_BELOW_BYTES) {
    content.push({
      type: "text",
      text: `[answer text left out of the context for size: ${textBytes} bytes]`,
    });
  } else if (text.length > 0) {
    content.push(...message.content.filter((block) => block.type === "text"));
  }
  for (const block of message.content)
    if (block.type === "toolCall") content.push(leaveOutArguments(block));
  return { ...message, content };
}
