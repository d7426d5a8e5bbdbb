/**
 * Handoff definitions a coordinator refuses at start (`startCoordinator({ agents })`, before
 * it connects to anything): a handoff to an agent it does not define, or one whose
 * `transfer_to_<name>` would be no valid tool name.
 */
import { defineAgent, startCoordinator, ToolStore } from "@yiem/core";
import { describe, expect, it } from "vitest";

const support = { name: "support", instructions: "Help.", model: "m" };

describe("a coordinator's agents with handoffs", () => {
  it("fail the start when a handoff names an agent not defined", async () => {
    const agents = [
      defineAgent({ ...support, handoffs: ["billing"] }),
      defineAgent({ name: "ops", instructions: "Run.", model: "m" }),
    ];
    const start = startCoordinator({
      redis: "redis://127.0.0.1:1",
      agents,
      toolStore: new ToolStore({ name: "handoffs" }),
    });
    await expect(start).rejects.toThrow(
      'agent "support": handoffs: unknown agent "billing" (known: ops, support)',
    );
  });

  it("are refused when a target's name makes no tool name", () => {
    expect(() => defineAgent({ ...support, handoffs: ["billing.eu"] })).toThrow(
      `agent "support": handoffs: "billing.eu" makes no valid tool name transfer_to_billing.eu`,
    );
    expect(() => defineAgent({ ...support, handoffs: ["b".repeat(60)] })).toThrow(
      "makes no valid tool name",
    );
  });
});
