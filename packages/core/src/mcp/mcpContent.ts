import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { MessageContent } from "../types/content.js";
import type { AgentToolResult } from "../types/tools.js";

/** Bytes a base64 text stands for (about). */
function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4);
}

type EmbeddedResource = Extract<ContentBlock, { type: "resource" }>["resource"];

function describeResource(resource: EmbeddedResource): MessageContent {
  const mime = resource.mimeType ?? "unknown type";
  if ("text" in resource) {
    return { type: "text", text: `[resource ${resource.uri} (${mime})]\n${resource.text}` };
  }
  if (resource.mimeType?.startsWith("image/")) {
    return { type: "image", data: resource.blob, mimeType: resource.mimeType };
  }
  const bytes = base64Bytes(resource.blob);
  return { type: "text", text: `[resource ${resource.uri} (${mime}, ${bytes} bytes, not shown)]` };
}

/**
 * One MCP content block as Yiem content: text and images as they are, an embedded resource
 * as its text (or its image), everything else (audio, binary resources, resource links) as
 * a line of text that says what it was.
 */
export function toMessageContent(block: ContentBlock): MessageContent {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", data: block.data, mimeType: block.mimeType };
    case "audio":
      return {
        type: "text",
        text: `[audio (${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown)]`,
      };
    case "resource":
      return describeResource(block.resource);
    case "resource_link": {
      const about = [block.mimeType, block.description].filter(Boolean).join(", ");
      return {
        type: "text",
        text: `[resource link: ${block.name} ${block.uri}${about ? ` (${about})` : ""}]`,
      };
    }
  }
}

/** The text blocks of an MCP result, joined: what an error result says. */
export function describeMcpResultText(result: CallToolResult): string {
  return result.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/**
 * A `tools/call` result as a Yiem tool result: its content mapped block by block
 * (`toMessageContent`), `structuredContent` kept in `details.structuredContent` (and given as
 * JSON text when the content is empty), the server and tool in `details.mcp`.
 */
export function toAgentToolResult(
  result: CallToolResult,
  origin: { server: string; tool: string },
): AgentToolResult {
  const content = result.content.map(toMessageContent);
  const details: Record<string, unknown> = { mcp: origin };
  if (result.structuredContent !== undefined) {
    details.structuredContent = result.structuredContent;
    if (content.length === 0) {
      content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
    }
  }
  if (content.length === 0) content.push({ type: "text", text: "(the tool returned no content)" });
  return { content, details };
}
