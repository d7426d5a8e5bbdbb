import type { AgentContext, AgentMessage, AgentTool, AssistantMessage } from "@yiem/core";
import { formatMsgForLLM } from "@yiem/core";
import { describe, expect, it } from "vitest";

const T = 1_700_000_000_000;

function context(messages: AgentMessage[], systemPrompt = "", tools: AgentTool[] = []) {
  const ctx: AgentContext = { systemPrompt, messages, tools: new Map() };
  for (const tool of tools) ctx.tools.set(tool.name, tool);
  return ctx;
}

function tool(name: string): AgentTool {
  return {
    name,
    label: name,
    description: `The ${name} tool`,
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    execute: () => ({ content: [], details: {} }),
  };
}

function assistant(partial: Partial<AssistantMessage>): AssistantMessage {
  return { role: "assistant", content: [], stopReason: "stop", timestamp: T, ...partial };
}

describe("lifecycle §14 formatMsgForLLM hook: agent context to Chat Completions", () => {
  it("puts a non-empty system prompt first and omits an empty one", () => {
    const user: AgentMessage = {
      role: "user",
      content: [{ type: "text", text: "hi" }],
      timestamp: T,
    };
    expect(formatMsgForLLM(context([user], "Be brief.")).messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
    expect(formatMsgForLLM(context([user])).messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("sends a user message with images as content parts with data URLs", () => {
    const user: AgentMessage = {
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      timestamp: T,
    };
    expect(formatMsgForLLM(context([user])).messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      ],
    });
  });

  it("sends assistant text and tool calls, echoing rawArguments and dropping thinking", () => {
    const message = assistant({
      stopReason: "toolUse",
      content: [
        { type: "thinking", thinking: "let me think" },
        { type: "text", text: "Checking." },
        { type: "toolCall", id: "c1", name: "search", arguments: {}, rawArguments: '{"q": "x"' },
        { type: "toolCall", id: "c2", name: "search", arguments: { q: "y" } },
      ],
    });
    expect(formatMsgForLLM(context([message])).messages[0]).toEqual({
      role: "assistant",
      content: "Checking.",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "search", arguments: '{"q": "x"' } },
        { id: "c2", type: "function", function: { name: "search", arguments: '{"q":"y"}' } },
      ],
    });
  });

  it("sends an assistant message with only tool calls with null content", () => {
    const message = assistant({
      content: [{ type: "toolCall", id: "c1", name: "search", arguments: { q: "a" } }],
    });
    const [formatted] = formatMsgForLLM(context([message])).messages;
    expect(formatted).toMatchObject({ role: "assistant", content: null });
  });

  it("skips failed assistant messages that carry neither text nor tool calls", () => {
    const messages = [
      assistant({ stopReason: "error", errorMessage: "500 boom" }),
      assistant({ stopReason: "aborted", content: [{ type: "thinking", thinking: "hm" }] }),
      assistant({ stopReason: "error", content: [{ type: "text", text: "partial" }] }),
    ];
    expect(formatMsgForLLM(context(messages)).messages).toEqual([
      { role: "assistant", content: "partial" },
    ]);
  });

  it("sends tool results as role tool with text joined by newlines and images described", () => {
    const result: AgentMessage = {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "search",
      content: [
        { type: "text", text: "line 1" },
        { type: "image", data: "AAAA", mimeType: "image/jpeg" },
        { type: "text", text: "line 2" },
      ],
      details: {},
      isError: false,
      timestamp: T,
    };
    expect(formatMsgForLLM(context([result])).messages).toEqual([
      { role: "tool", tool_call_id: "c1", content: "line 1\n[image image/jpeg]\nline 2" },
    ]);
  });

  it("lists every tool in registration order as a function tool", () => {
    const request = formatMsgForLLM(context([], "", [tool("b"), tool("a")]));
    expect(request.tools).toEqual([
      {
        type: "function",
        function: { name: "b", description: "The b tool", parameters: tool("b").inputSchema },
      },
      {
        type: "function",
        function: { name: "a", description: "The a tool", parameters: tool("a").inputSchema },
      },
    ]);
    expect(formatMsgForLLM(context([])).tools).toEqual([]);
  });
});
