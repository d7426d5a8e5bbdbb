import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";

interface WireMessage {
  role: string;
  content?: unknown;
}

const CITIES = [
  { city: "Tokyo", timezone: "Asia/Tokyo" },
  { city: "London", timezone: "Europe/London" },
  { city: "New York", timezone: "America/New_York" },
];

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

function firstLine(text: string): string {
  return text.split("\n").find((line) => line.trim()) ?? text;
}

/**
 * The demo's offline model. For a new question it asks, in one parallel batch, for the
 * weather and the time in three cities and for the team's status page; once the results are
 * in, it answers from them. Deterministic, so the demo shows the same run every time.
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
          ...CITIES.map(({ city }) => ({ name: "getWeather", arguments: { city } })),
          ...CITIES.map(({ timezone }) => ({ name: "getTime", arguments: { timezone } })),
          { name: "httpFetch", arguments: { url: statusPageUrl } },
        ],
      };
    }
    const status = results.find((text) => text.includes("STATUS:"))?.match(/STATUS: [^\n<]*/)?.[0];
    const lines = results
      .filter((text) => !text.includes("STATUS:"))
      .map((text) => `- ${firstLine(text)}`);
    return {
      kind: "text",
      text: `Here is what the tools found:\n${lines.join("\n")}\nThe status page says ${status ?? "nothing"}.`,
    };
  };
}
