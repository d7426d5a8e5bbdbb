import type {
  AgentEvent,
  AgentMessage,
  AssistantContent,
  ToolArgs,
  ToolCallContent,
} from "../types/index.js";

/**
 * Tool-call arguments whose JSON is at most this many bytes travel whole in bus events;
 * larger ones are cut to a preview (`cutEventArguments`). The whole arguments are in the
 * session's transcript (the model's message) and, for a call awaiting approval, in its
 * approval request.
 */
export const EVENT_ARGUMENTS_MAX_BYTES = 4096;

/** About how many characters of strings a preview keeps, all strings and keys together. */
const PREVIEW_CHARS = 1024;
/** The most characters one string keeps in a preview. */
const PREVIEW_STRING_CHARS = 256;
/** What a preview puts in place of what it left out. */
const MORE = "…";

/** The characters a preview has left to spend. */
interface Budget {
  left: number;
}

function cutText(text: string, budget: Budget): string {
  const room = Math.max(0, Math.min(PREVIEW_STRING_CHARS, budget.left));
  budget.left -= Math.min(text.length, room) + 2;
  return text.length <= room ? text : `${text.slice(0, room)}${MORE}`;
}

function previewOf(value: unknown, budget: Budget): unknown {
  if (typeof value === "string") return cutText(value, budget);
  budget.left -= 4;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      if (budget.left <= 0) return [...items, MORE];
      items.push(previewOf(item, budget));
    }
    return items;
  }
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(value)) {
    if (budget.left <= 0) return Object.fromEntries([...entries, [MORE, MORE]]);
    entries.push([cutText(key, budget), previewOf(item, budget)]);
  }
  return Object.fromEntries(entries);
}

/**
 * A short preview of tool-call arguments: the same shape, with strings over 256 characters
 * cut (ending in `…`), and once about 1,024 characters are spent, the rest of each object or
 * array left out (a last `"…"` item or key). At most a few KiB of JSON, whatever the input.
 *
 * @example previewArguments({ path: "a.txt", content: "x".repeat(100_000) }) // { path: "a.txt", content: "xxx…" (256 x) }
 */
export function previewArguments(args: ToolArgs): ToolArgs {
  return previewOf(args, { left: PREVIEW_CHARS }) as ToolArgs;
}

/** The JSON size of arguments in bytes, and whether they are over the events' limit. */
function measure(args: ToolArgs, raw?: string): { bytes: number; over: boolean } {
  const bytes = Buffer.byteLength(raw ?? JSON.stringify(args) ?? "", "utf8");
  return { bytes, over: bytes > EVENT_ARGUMENTS_MAX_BYTES };
}

/** A tool-call block with its arguments cut (the raw text dropped), or as it is when small. */
function cutBlock(block: AssistantContent): AssistantContent {
  if (block.type !== "toolCall") return block;
  const { bytes, over } = measure(block.arguments, block.rawArguments);
  if (!over) return block;
  const cut: ToolCallContent = {
    type: "toolCall",
    id: block.id,
    name: block.name,
    arguments: previewArguments(block.arguments),
    argsTruncated: true,
    argsBytes: bytes,
  };
  return cut;
}

/** The message with its large tool-call arguments cut; the same object when none is. */
function cutMessage<M extends AgentMessage>(message: M): M {
  if (message.role !== "assistant") return message;
  const content = message.content.map(cutBlock);
  if (content.every((block, i) => block === message.content[i])) return message;
  return { ...message, content };
}

/**
 * An event as a cluster's bus carries it (stored in the session's replay stream and
 * published live, the same text): tool-call arguments whose JSON is over
 * `EVENT_ARGUMENTS_MAX_BYTES` (4 KiB) are cut to a preview (`previewArguments`) marked
 * `argsTruncated: true` with their size in `argsBytes`: the `arguments` of `toolExecStart`,
 * `toolExecUpdate` and `toolApprovalRequested`, and of the tool-call blocks in the messages
 * of `messageEnd`, `turnEnd` and `agentEnd` (whose `rawArguments` is then dropped). So a
 * turn of large calls stores its arguments once, in the transcript, not once per event that
 * names them. Everything else travels as it is; the same object comes back when nothing was
 * cut. Never throws.
 *
 * @example cutEventArguments({ type: "toolExecStart", toolCallId: "c1", toolName: "write", arguments: big })
 * // { type: "toolExecStart", …, arguments: previewArguments(big), argsTruncated: true, argsBytes: 262144 }
 */
export function cutEventArguments(event: AgentEvent): AgentEvent {
  switch (event.type) {
    case "toolExecStart":
    case "toolExecUpdate":
    case "toolApprovalRequested": {
      const { bytes, over } = measure(event.arguments);
      if (!over) return event;
      return {
        ...event,
        arguments: previewArguments(event.arguments),
        argsTruncated: true,
        argsBytes: bytes,
      };
    }
    case "messageEnd": {
      const message = cutMessage(event.message);
      return message === event.message ? event : { ...event, message };
    }
    case "turnEnd": {
      const message = cutMessage(event.message);
      return message === event.message ? event : { ...event, message };
    }
    case "agentEnd": {
      const response = cutMessage(event.response);
      return response === event.response ? event : { ...event, response };
    }
    default:
      return event;
  }
}
