import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentTool,
  AgentToolCall,
  AgentToolResult,
  AssistantMessage,
  EmitFn,
} from "@yiem/core";

/** A text-only tool result. */
export function textResult(text: string, extra: Partial<AgentToolResult> = {}): AgentToolResult {
  return { content: [{ type: "text", text }], details: {}, ...extra };
}

/** A tool with an open object schema; override any field. */
export function makeTool(name: string, overrides: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    label: `${name} label`,
    description: `${name} description`,
    inputSchema: { type: "object", properties: {} },
    execute: () => textResult(`${name} ran`),
    ...overrides,
  };
}

/** A tool call as the pipeline sees it. */
export function makeCall(
  id: string,
  name: string,
  args: Record<string, unknown> = {},
): AgentToolCall {
  return { type: "function", id, name, arguments: args };
}

/** An assistant message asking for the given calls. */
export function assistantWith(calls: AgentToolCall[]): AssistantMessage {
  return {
    role: "assistant",
    content: calls.map((call) => ({
      type: "toolCall",
      id: call.id,
      name: call.name,
      arguments: call.arguments,
    })),
    stopReason: "toolUse",
    timestamp: Date.now(),
  };
}

/** A context whose tool map holds `tools`. */
export function contextWith(tools: AgentTool[]): AgentContext {
  return {
    systemPrompt: "test",
    messages: [],
    tools: new Map(tools.map((tool) => [tool.name, tool])),
  };
}

/** A loop config for a batch over the context's tools (the context carries the tools). */
export function configFor(
  _context: AgentContext,
  overrides: Partial<AgentLoopConfig> = {},
): AgentLoopConfig {
  return { toolExecution: "parallel", ...overrides };
}

/** An event sink that records every event, with helpers to read them. */
export function recordEvents(): {
  emit: EmitFn;
  events: AgentEvent[];
  forCall(id: string): string[];
} {
  const events: AgentEvent[] = [];
  return {
    events,
    emit: (event) => {
      events.push(event);
    },
    forCall: (id) =>
      events
        .filter((event) => "toolCallId" in event && event.toolCallId === id)
        .map((event) => event.type),
  };
}

/** The text of a result's first block. */
export function firstText(result: { content: ReadonlyArray<{ type: string }> }): string {
  const block = result.content[0] as { type: string; text?: string } | undefined;
  return block?.text ?? "";
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
