import type { ScriptedReply, ScriptedRequest } from "../../test/support/scriptedModelServer.js";

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
}

const ZONES = ["Asia/Tokyo", "Europe/London", "America/New_York"];

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part as { text?: string }).text ?? "").join(" ");
}

/** The tool results the model received since the last user message. */
function resultsSinceLastUser(messages: WireMessage[]): string[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  return messages
    .slice(lastUser + 1)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content));
}

/**
 * The demo's offline model: for a new question it calls `getTime` for three zones and
 * `httpFetch` for the demo's own status page, all in one parallel batch; once the results
 * are in, it answers from them. Deterministic, so the demo shows the same run every time.
 */
export function createScriptedBrain(statusPageUrl: string) {
  return (request: ScriptedRequest): ScriptedReply => {
    const messages = (request.body.messages ?? []) as WireMessage[];
    const results = resultsSinceLastUser(messages);
    if (results.length === 0) {
      return {
        kind: "toolCalls",
        text: "Let me look that up.",
        argumentChunks: 3,
        calls: [
          ...ZONES.map((timezone) => ({ name: "getTime", arguments: { timezone } })),
          { name: "httpFetch", arguments: { url: statusPageUrl } },
        ],
      };
    }
    const lines = results.map(
      (text) => `- ${text.split("\n").find((line) => line.trim()) ?? text}`,
    );
    const status = results.find((text) => text.includes("STATUS:"));
    const statusLine = status?.match(/STATUS: [^\n<]*/)?.[0] ?? "no status found";
    return {
      kind: "text",
      text: `Here is what the tools found:\n${lines.slice(0, ZONES.length).join("\n")}\nThe status page says ${statusLine}.`,
    };
  };
}
