/**
 * A run that ends before any model call counts none: an agent whose instructions throw for a
 * session ends its run with `stopReason: "error"` naming the failure, and the run's usage says
 * 0 model calls (it once said 1, for a model call nobody made). An in-process coordinator on a
 * real Redis, a request from the client.
 */
import { defineAgent } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";

const local = useInProcessCoordinator({
  respond: () => ({ kind: "text", text: "never asked" }),
  tools: [],
  storeName: "failing-agent-usage",
  coordinator: {
    agents: [
      defineAgent({
        name: "moody",
        model: "scripted-model",
        instructions: () => {
          throw new Error("no prompt today");
        },
        llmCall: async () => {
          throw new Error("the model is never called");
        },
      }),
    ],
  },
});

describe("a run that makes no model call", () => {
  it("ends with the instructions' error and counts no model call", async () => {
    const before = local.model.requests.length;
    const { requestId } = await local.client.send("hi");
    const answer = await local.client.waitForAnswer(requestId, { timeoutMs: 20_000 });
    expect(answer.agent).toBe("moody");
    expect(answer.response.stopReason).toBe("error");
    expect(answer.response.errorMessage).toBe(
      'the instructions of agent "moody" failed: no prompt today',
    );
    expect(answer.usage?.modelCalls).toBe(0);
    expect(local.model.requests.length).toBe(before);
  });
});
