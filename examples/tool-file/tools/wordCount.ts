import type { AgentTool } from "@yiem/core";

/** Counts the words of `text` (runs of letters, digits, apostrophes) and names the most frequent. */
export function countWords(text: string): { words: number; mostFrequent?: string } {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  let mostFrequent: string | undefined;
  for (const [word, count] of counts) {
    if (mostFrequent === undefined || count > (counts.get(mostFrequent) ?? 0)) mostFrequent = word;
  }
  return { words: words.length, mostFrequent };
}

/**
 * `wordCount`, as a tool file: one tool per file, exported by `getTool()`. Put this folder in
 * `YIEM_TOOLS_DIR` and every coordinator and worker loads it beside the built-in tools;
 * in-process, `loadTools(store, folder)` does the same.
 */
export function getTool(): AgentTool {
  return {
    name: "wordCount",
    label: "Word Count",
    description: "Counts the words of a text and names its most frequent word",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", description: "The text to count the words of" } },
      required: ["text"],
    },
    // The tool's code: arguments arrive validated against `inputSchema`; a throw becomes an
    // error result the model reads.
    execute: (_toolCallId, args, _signal, onPartialResult) => {
      const text = String(args.text);
      onPartialResult(`counting ${text.length} characters`); // a live toolExecUpdate event
      const { words, mostFrequent } = countWords(text);
      const most = mostFrequent ? `; most frequent: "${mostFrequent}"` : "";
      return { content: [{ type: "text", text: `${words} words${most}` }], details: { words } };
    },
    // May run beside the other calls of its batch: on a cluster, a parallel batch runs on workers.
    parallelToolExecute: true,
    // If the worker running a call dies, the call runs once more on another worker (default 0:
    // the call gets an error result instead).
    retries: 1,
    // Safe to run twice: a coordinator that takes over a session may run an interrupted
    // in-process call of this tool again (otherwise the model gets an "interrupted" result).
    idempotent: true,
  };
}
