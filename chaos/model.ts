import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { CHILD_CALL_TOOL, callLabel, decodePlan, encodePlan, type PlannedCall } from "./plan.js";

/** A message as the Chat Completions request carries it. */
type WireMessage = { role: string; content?: unknown; tool_calls?: unknown[] };

/**
 * The soak's model: a pure function of the conversation, so a run resumed after a crash asks
 * again and gets the same calls (same ids), as a crash-free run would. It reads the plan of
 * the latest chaos input (`plan.ts`), counts the tool-call turns it already answered since
 * that input, and answers the next step's calls, or `done <label>` after the last step. A
 * child call (`agent__helper`) carries the child's plan, labelled with the call's label, as
 * its input: the child's run, asked the same way, answers `done <that label>`.
 */
export function respondToChaos(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as WireMessage[];
  const inputAt = findLastIndex(
    messages,
    (m) => m.role === "user" && textOf(m).startsWith("chaos "),
  );
  const plan = inputAt >= 0 ? decodePlan(textOf(messages[inputAt] as WireMessage)) : undefined;
  if (!plan) return { kind: "text", text: "no chaos input in this conversation" };
  const answered = messages
    .slice(inputAt + 1)
    .filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
  const step = plan.steps[answered];
  if (!step) return { kind: "text", text: `done ${plan.label}` };
  return {
    kind: "toolCalls",
    calls: step.map((call, index) => callOf(call, callLabel(plan.label, answered, index))),
  };
}

/** The model's call for a planned call: the chaos tool with its label and time, or the child agent with its plan. */
function callOf(call: PlannedCall, label: string) {
  if (call.tool === CHILD_CALL_TOOL)
    return {
      id: label,
      name: call.tool,
      arguments: { input: encodePlan({ label, steps: call.steps }) },
    };
  return { id: label, name: call.tool, arguments: { label, ms: call.ms } };
}

function textOf(message: WireMessage): string {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content
    .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
    .join("");
}

function findLastIndex<T>(items: T[], match: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (match(items[i] as T)) return i;
  return -1;
}
