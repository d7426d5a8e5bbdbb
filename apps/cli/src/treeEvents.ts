import type { BusEvent } from "@yiem/core/client";
import { contentText, oneLine } from "./renderEvents.js";
import { escapeControlChars } from "./terminalText.js";

/** Untrusted text as one escaped line of at most `max` characters. */
function shown(text: string, max: number): string {
  return oneLine(escapeControlChars(text), max);
}

/** What one event of a child run says, without its indentation; nothing for most events. */
function treeEventText(event: BusEvent): string | undefined {
  switch (event.type) {
    case "agentStart":
      return `▶ started (session ${escapeControlChars(event.sessionId)})`;
    case "toolExecStart":
      return `→ ${shown(event.toolName, 60)}(${shown(JSON.stringify(event.arguments) ?? "", 50)}) started`;
    case "toolExecEnd":
      return `${event.isError ? "✖" : "✔"} ${shown(event.toolName, 60)} — ${shown(contentText(event.result.content), 80)}`;
    case "toolApprovalRequested": {
      const target = escapeControlChars(`${event.sessionId} ${event.callKey}`);
      return `⏸ ${shown(event.toolName, 60)} awaits approval: ${shown(event.reason, 80)} — yiem approve ${target} / yiem deny ${target}`;
    }
    case "agentEnd": {
      const answer = event.response.content
        .flatMap((block) => (block.type === "text" ? [block.text] : []))
        .join(" ");
      return `◀ ${event.response.stopReason}: ${shown(answer || (event.response.errorMessage ?? ""), 100)}`;
    }
    default:
      return undefined;
  }
}

/**
 * The line `yiem send` and `yiem watch` print for an event of a child run seen at its root
 * (`event.path`): indented two spaces per level under the root, led by the child's agent
 * (`  [researcher] ✔ webSearch — …`); `undefined` for an event of the session itself or one
 * the tree view leaves out (model text, turns).
 */
export function treeEventLine(event: BusEvent): string | undefined {
  const path = event.path;
  if (!path || path.length === 0) return undefined;
  const text = treeEventText(event);
  if (text === undefined) return undefined;
  const agent = escapeControlChars(path.at(-1)?.agent ?? "?");
  return `${"  ".repeat(path.length)}[${agent}] ${text}`;
}
