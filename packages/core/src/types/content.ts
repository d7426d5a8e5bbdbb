/** Plain text, in any message. */
export interface TextContent {
  type: "text";
  text: string;
}

/** An image as base64 `data` with its MIME type, in user and tool-result messages. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/** A model's reasoning, kept in the transcript but never sent back as an answer. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
}

/**
 * One tool call requested by the model, as stored in an assistant message.
 *
 * `arguments` is the parsed object. `rawArguments` keeps the exact string the model sent
 * when it sent one, so a string that did not parse (or parsed to something hostile) is still
 * visible to `extractToolCalls`, which turns it into that call's error result.
 */
export interface ToolCallContent {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  rawArguments?: string;
  /**
   * Only in a message carried by an event on a cluster's bus: `arguments` is a preview,
   * because their JSON was over 4 KiB (see `cutEventArguments`), and `rawArguments` is left
   * out; the transcript keeps the whole block. Never set in a transcript.
   */
  argsTruncated?: true;
  /** With `argsTruncated`: the size of the whole arguments (the model's text), in bytes. */
  argsBytes?: number;
}

/** Content a user message or a tool result may carry. */
export type MessageContent = TextContent | ImageContent;

/** Content an assistant message may carry. */
export type AssistantContent = TextContent | ThinkingContent | ToolCallContent;
