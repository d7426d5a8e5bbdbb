// A bench-only tool file in plain JavaScript, loaded as `noopStep.mjs` is (YIEM_TOOLS_DIR).
// `progressStep`: reports one partial result (a live toolExecUpdate event), then answers "ok",
// in a parallel batch: the tool of the `sessions` scenario's client-sends shape.

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return {
    name: "progressStep",
    label: "Progress Step",
    description: "Reports one partial result, then answers ok",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" } },
      required: ["label"],
    },
    parallelToolExecute: true,
    execute: async (_toolCallId, args, _signal, onPartialResult) => {
      onPartialResult?.({
        content: [{ type: "text", text: `half of ${args.label}` }],
        details: {},
      });
      return { content: [{ type: "text", text: "ok" }], details: {} };
    },
  };
}
