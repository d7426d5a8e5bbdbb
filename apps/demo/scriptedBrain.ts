import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";

interface WireMessage {
  role: string;
  content?: unknown;
}

/** The cities the demo's model knows, with their time zones (the fake weather knows them too). */
const CITIES = [
  { city: "Tokyo", timezone: "Asia/Tokyo" },
  { city: "London", timezone: "Europe/London" },
  { city: "New York", timezone: "America/New_York" },
  { city: "Paris", timezone: "Europe/Paris" },
  { city: "Sydney", timezone: "Australia/Sydney" },
];

/** The cities asked about when a question names none. */
const DEFAULT_CITIES = CITIES.slice(0, 3);

/** A tool call the model asks for. */
interface PlannedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * The calls a question asks for: the weather and/or the time (both when it names neither
 * but names a city) in the cities it names (the first three when none), and the status page
 * when it mentions it. None for a question about none of these.
 */
function plannedCalls(question: string, statusPageUrl: string): PlannedCall[] {
  const text = question.toLowerCase();
  const named = CITIES.filter(({ city }) => text.includes(city.toLowerCase()));
  const asksWeather = /weather|temperature|rain|forecast/.test(text);
  const asksTime = /\btime\b|clock|what hour/.test(text);
  const asksStatus = /status/.test(text);
  const both = !asksWeather && !asksTime && named.length > 0;
  const cities = named.length > 0 ? named : DEFAULT_CITIES;
  return [
    ...(asksWeather || both
      ? cities.map(({ city }) => ({ name: "getWeather", arguments: { city } }))
      : []),
    ...(asksTime || both
      ? cities.map(({ timezone }) => ({ name: "getTime", arguments: { timezone } }))
      : []),
    ...(asksStatus ? [{ name: "httpFetch", arguments: { url: statusPageUrl } }] : []),
  ];
}

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

/** The question of the conversation: its last user message. */
function lastQuestion(messages: WireMessage[]): string {
  return textOf(messages.findLast((m) => m.role === "user")?.content);
}

/**
 * The demo's offline model. For a new question it asks, in one parallel batch, for what the
 * question asks about (see `plannedCalls`: the weather, the time, in the cities named, the
 * team's status page); once the results are in, it answers from them. A question about none
 * of these gets an answer that says what it can look up. Deterministic: the same question
 * gets the same run every time.
 */
export function createScriptedBrain(statusPageUrl: string) {
  return (request: ScriptedRequest): ScriptedReply => {
    const messages = (request.body.messages ?? []) as WireMessage[];
    const results = resultsSinceLastUser(messages);
    if (results.length === 0) {
      const question = lastQuestion(messages);
      const calls = plannedCalls(question, statusPageUrl);
      if (calls.length === 0) return { kind: "text", text: cannotAnswer(question) };
      return { kind: "toolCalls", text: "Let me look that up.", argumentChunks: 3, calls };
    }
    const status = results.find((text) => text.includes("STATUS:"))?.match(/STATUS: [^\n<]*/)?.[0];
    const lines = results
      .filter((text) => !text.includes("STATUS:"))
      .map((text) => `- ${firstLine(text)}`);
    const found = lines.length > 0 ? `Here is what the tools found:\n${lines.join("\n")}` : "";
    const page = status ? `The status page says ${status}.` : "";
    return { kind: "text", text: [found, page].filter(Boolean).join("\n") };
  };
}

/** The answer to a question the scripted model has no tool for: what it can look up. */
function cannotAnswer(question: string): string {
  const cities = CITIES.map(({ city }) => city).join(", ");
  const shown = question.length > 80 ? `${question.slice(0, 79)}…` : question;
  return `I am the demo's scripted model, so I cannot answer "${shown}". Ask me about the weather or the time in ${cities}, or about the status page; or set OPENAI_BASE_URL for a real model.`;
}
