// A test-only tool that holds the event loop of the process running it: a sequential call
// runs inside the coordinator, so this blocks the coordinator's main thread for `ms`.

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return {
    name: "blockLoop",
    label: "Block Loop",
    description: "Keeps the process busy for ms milliseconds without yielding",
    inputSchema: {
      type: "object",
      properties: { ms: { type: "number" } },
      required: ["ms"],
    },
    execute: async (_id, args) => {
      const until = Date.now() + Number(args.ms);
      while (Date.now() < until) {
        // spin: nothing else on this thread runs meanwhile
      }
      return { content: [{ type: "text", text: "done" }], details: {} };
    },
  };
}
