// A bench-only tool file in plain JavaScript, so the compiled processes of the `sessions10k`
// scenario (`node apps/…/dist/main.js`, no tsx) load it through YIEM_TOOLS_DIR.
// `noopStep`: answers "ok" at once (no partial result, no wait), in a parallel batch.

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return {
    name: "noopStep",
    label: "No-op Step",
    description: "Answers ok at once",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" } },
      required: ["label"],
    },
    parallelToolExecute: true,
    execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
  };
}
