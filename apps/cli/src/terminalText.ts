/**
 * Text the CLI did not write itself (model answers, tool names, arguments, results, progress,
 * error messages, worker ids) made harmless for a terminal before it is placed in a line.
 */

// C0 controls except tab and newline, DEL, and C1 controls: ESC (\x1b), BEL (\x07), CSI (\x9b)…
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

// What `JSON.stringify` leaves unescaped of the above: DEL and the C1 controls.
const JSON_RAW_CONTROLS = /[\x7f-\x9f]/g;

function hex(char: string, digits: number): string {
  return char.charCodeAt(0).toString(16).padStart(digits, "0");
}

/**
 * Replaces every control character of `text` (C0 except `\n` and `\t`, DEL, C1, and so every
 * ESC) with its visible `\xNN` form, so the text can neither move the cursor, clear the
 * screen, set the window title nor write the clipboard (OSC 52). Never changes any other
 * character, and never touches the CLI's own sequences: apply it to untrusted text before
 * it goes into a line, never to a finished line.
 *
 * @example escapeControlChars("hi\x1b]0;pwned\x07") // "hi\\x1b]0;pwned\\x07"
 */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL_CHARS, (char) => `\\x${hex(char, 2)}`);
}

/**
 * `value` as one line of JSON in which no control character appears raw: `JSON.stringify`
 * already escapes C0, and DEL and C1 become `\u00XX` here. A JSON reader gets exactly the same
 * value; never adds a newline.
 *
 * @example formatJsonLine({ text: "a\u009b2J" }) // '{"text":"a\\u009b2J"}'
 */
export function formatJsonLine(value: object): string {
  return JSON.stringify(value).replace(JSON_RAW_CONTROLS, (char) => `\\u${hex(char, 4)}`);
}
