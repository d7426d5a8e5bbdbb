/** A `YIEM_AGENTS` module for test/core/agentsFile.test.ts: `defineAgent` definitions, one with instructions as a function. */
import { defineAgent } from "@yiem/core";

/** The agents this module defines. */
export const agents = [
  defineAgent({
    name: "ops",
    model: "ops-model",
    instructions: ({ sessionId }) => `ops for ${sessionId}`,
    tools: ["getTime"],
  }),
];
