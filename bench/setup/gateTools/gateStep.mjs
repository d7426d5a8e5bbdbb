// A bench-only tool file in plain JavaScript, loaded with `noopStep.mjs` by the compiled
// processes of the `sessions10k` scenario (YIEM_TOOLS_DIR): `gateStep` needs a person's
// approval for each call, so a run that calls it parks until then.

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return {
    name: "gateStep",
    label: "Gate Step",
    description: "Opens once a person approves",
    inputSchema: {
      type: "object",
      properties: { label: { type: "string" } },
      required: ["label"],
    },
    parallelToolExecute: true,
    approval: "always",
    execute: async () => ({ content: [{ type: "text", text: "opened" }], details: {} }),
  };
}
