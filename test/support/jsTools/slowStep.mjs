// A tool file in plain JavaScript, so compiled processes (`node …/dist/main.bundle.js`, no tsx) load it.
// `slowStep`: reports that it started (a toolExecUpdate), waits `ms` (honouring its signal),
// then answers with its label and its pid.

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return {
    name: "slowStep",
    label: "Slow Step",
    description: "Waits, then answers with its label and the process that ran it",
    inputSchema: {
      type: "object",
      properties: { ms: { type: "integer", minimum: 0 }, label: { type: "string" } },
      required: ["ms", "label"],
    },
    parallelToolExecute: true,
    execute: async (_id, args, signal, onPartialResult) => {
      onPartialResult({ started: process.pid });
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, Number(args.ms));
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new Error("slowStep aborted"));
        });
      });
      return {
        content: [{ type: "text", text: `${args.label} done by ${process.pid}` }],
        details: {},
      };
    },
  };
}
