/**
 * Placeholders in a script's texts and tool-call arguments: `{{input}}`, `{{match.KEY}}`,
 * `{{result}}`, `{{result.TOOL}}`, `{{results}}`, `{{results.TOOL}}`.
 */

/** One `{{...}}` of a text, parsed. */
export type Placeholder =
  | { kind: "input" }
  | { kind: "match"; key: string }
  | { kind: "result" | "results"; tool: string | undefined };

/** A tool's answer, as the model sees it in a `role: "tool"` message. */
export interface ToolResult {
  name: string;
  text: string;
}

/** What placeholders are filled with for one model call. */
export interface PlaceholderValues {
  /** The last user message. */
  input: string;
  /** The matched text (`0`) and the groups of the rule's regex, by number and by name. */
  match: Record<string, string>;
  /** The tool results since the last user message, in order. */
  results: ToolResult[];
}

/** The placeholders a user can write, for error messages. */
export const KNOWN_PLACEHOLDERS =
  "{{input}}, {{match.N}}, {{match.NAME}}, {{result}}, {{result.TOOL}}, {{results}}, {{results.TOOL}}";

const BRACES = /\{\{([^{}]*)\}\}/g;
const INSIDE = /^\s*(input|match|results?)(?:\.([A-Za-z0-9_-]+))?\s*$/;

/**
 * Parses the inside of one `{{...}}`; `undefined` when it is not a known placeholder
 * (`{{input}}` takes no key, `{{match}}` needs one).
 */
export function parsePlaceholder(inside: string): Placeholder | undefined {
  const parsed = INSIDE.exec(inside);
  if (!parsed) return undefined;
  const [, name, key] = parsed;
  if (name === "input") return key === undefined ? { kind: "input" } : undefined;
  if (name === "match") return key === undefined ? undefined : { kind: "match", key };
  return { kind: name === "results" ? "results" : "result", tool: key };
}

/** Every `{{...}}` of `text`, with its parse (`undefined` for an unknown one). */
export function findPlaceholders(
  text: string,
): Array<{ written: string; placeholder: Placeholder | undefined }> {
  return [...text.matchAll(BRACES)].map((found) => ({
    written: found[0],
    placeholder: parsePlaceholder(found[1] ?? ""),
  }));
}

/** `text` with every known placeholder replaced by its value (empty when there is none). */
export function fillPlaceholders(text: string, values: PlaceholderValues): string {
  return text.replace(BRACES, (written, inside: string) => {
    const placeholder = parsePlaceholder(inside);
    return placeholder ? placeholderValue(placeholder, values) : written;
  });
}

function placeholderValue(placeholder: Placeholder, values: PlaceholderValues): string {
  if (placeholder.kind === "input") return values.input;
  if (placeholder.kind === "match") return values.match[placeholder.key] ?? "";
  const results = values.results.filter(
    (result) => placeholder.tool === undefined || result.name === placeholder.tool,
  );
  if (placeholder.kind === "result") return results.at(-1)?.text ?? "";
  return results.map((result) => result.text).join("\n");
}
