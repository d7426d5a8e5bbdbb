import {
  type AgentEndEvent,
  type AssistantMessage,
  type LlmCall,
  type LlmUsage,
  type RunBudget,
  type RunUsage,
  readPriceTable,
  readRunBudget,
  YiemAgent,
} from "@yiem/core";
import { afterEach, describe, expect, it } from "vitest";
import { makeTool, textResult } from "../support/toolFixtures.js";

const agents: YiemAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.shutdown();
});

/** A model that asks for one `echo` call per turn for `turns` turns, each answer with `usages[i]`. */
function scriptedCall(turns: number, usages: LlmUsage[], model = "gpt-4o-2024-08-06"): LlmCall {
  let call = 0;
  return async () => {
    const index = call++;
    const usage = usages[index];
    const base = {
      role: "assistant" as const,
      model,
      timestamp: Date.now(),
      ...(usage ? { usage } : {}),
    };
    if (index >= turns)
      return { ...base, content: [{ type: "text", text: "done" }], stopReason: "stop" };
    const block = {
      type: "toolCall" as const,
      id: `c${index}`,
      name: "echo",
      arguments: { n: index },
    };
    return { ...base, content: [block], stopReason: "toolUse" } as AssistantMessage;
  };
}

const echo = makeTool("echo", { execute: () => textResult("ok") });

async function runOnce(
  options: ConstructorParameters<typeof YiemAgent>[0],
): Promise<AgentEndEvent> {
  let end: AgentEndEvent | undefined;
  const agent = new YiemAgent({
    ...options,
    tools: [echo],
    agentEventSink: (event) => {
      if (event.type === "agentEnd") end = event;
    },
  });
  agents.push(agent);
  agent.run("go");
  await agent.takeResponse();
  if (!end) throw new Error("no agentEnd");
  return end;
}

describe("a run's usage in agentEnd (in process)", () => {
  it("sums reasoning and cached tokens where the model reports them, and prices cached input at cachedInput and reasoning as output", async () => {
    const usages: LlmUsage[] = [
      {
        inputTokens: 1000,
        outputTokens: 200,
        totalTokens: 1200,
        reasoningTokens: 150,
        cachedInputTokens: 800,
      },
      { inputTokens: 1300, outputTokens: 50, totalTokens: 1350 },
      { inputTokens: 1400, outputTokens: 30, totalTokens: 1430, cachedInputTokens: 1300 },
    ];
    const prices = readPriceTable({ "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 } });
    const end = await runOnce({ llmCall: scriptedCall(2, usages), prices });
    expect(end.usage).toEqual({
      inputTokens: 3700,
      outputTokens: 280,
      reasoningTokens: 150,
      cachedInputTokens: 2100,
      totalTokens: 3980,
      modelCalls: 3,
      toolCalls: 2,
      // uncached 1600 × 2.5 + cached 2100 × 1.25 + output 280 × 10 (reasoning is inside output), per million
      costUsd: (1600 * 2.5 + 2100 * 1.25 + 280 * 10) / 1e6,
      unpricedModels: [],
    });
  });

  it("prices cached input at the input price when the table gives no cachedInput, and names a model it has no price for", async () => {
    const usages: LlmUsage[] = [
      { inputTokens: 1000, outputTokens: 10, totalTokens: 1010, cachedInputTokens: 600 },
    ];
    const priced = await runOnce({
      llmCall: scriptedCall(0, usages),
      prices: { "gpt-4o": { input: 2, output: 8 } },
    });
    expect(priced.usage.costUsd).toBeCloseTo((1000 * 2 + 10 * 8) / 1e6, 12);
    const unpriced = await runOnce({
      llmCall: scriptedCall(0, usages, "other-model"),
      prices: { "gpt-4o": { input: 2, output: 8 } },
    });
    expect(unpriced.usage).toMatchObject({
      costUsd: 0,
      unpricedModels: ["other-model"],
      modelCalls: 1,
    });
  });

  it("carries no cost without a price table, and counts a call that reported no usage", async () => {
    const end = await runOnce({ llmCall: scriptedCall(1, []) });
    expect(end.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      cachedInputTokens: 0,
      totalTokens: 0,
      modelCalls: 2,
      toolCalls: 1,
    });
  });

  it("refuses a price table whose price is negative, naming the model and field", () => {
    expect(() => readPriceTable({ m: { input: -1, output: 1 } })).toThrow(
      'prices: "m".input must be a number of dollars per million tokens (0 or more)',
    );
    expect(() => readPriceTable({ m: { input: 1, output: 1, cached: 1 } })).toThrow(
      'prices: "m".cached is not a price (input, output, cachedInput)',
    );
  });
});

describe("a run's budget (checked before each model call)", () => {
  const usages: LlmUsage[] = Array.from({ length: 10 }, () => ({
    inputTokens: 1000,
    outputTokens: 100,
    totalTokens: 1100,
  }));
  const prices = { "gpt-4o": { input: 2.5, output: 10 } };
  const cases: Array<[string, RunBudget, string, Partial<RunUsage>]> = [
    [
      "maxModelCalls",
      { maxModelCalls: 2 },
      "maxModelCalls (2 model calls; used 2)",
      { modelCalls: 2, toolCalls: 2 },
    ],
    [
      "maxToolCalls",
      { maxToolCalls: 3 },
      "maxToolCalls (3 tool calls; used 3)",
      { modelCalls: 3, toolCalls: 3 },
    ],
    [
      "maxTokens",
      { maxTokens: 2000 },
      "maxTokens (2000 tokens; used 2200)",
      { modelCalls: 2, totalTokens: 2200 },
    ],
    [
      "maxCostUsd",
      { maxCostUsd: 0.008 },
      "maxCostUsd (0.008 dollars; used 0.0105)",
      { modelCalls: 3, costUsd: 0.0105 },
    ],
  ];
  for (const [name, budget, reached, used] of cases) {
    it(`stops a run that reached ${name} with stopReason budget, naming it, and makes no further model call`, async () => {
      let calls = 0;
      const model = scriptedCall(8, usages);
      const llmCall: LlmCall = (...args) => {
        calls++;
        return model(...args);
      };
      const end = await runOnce({ llmCall, prices, budget });
      expect(end.response.stopReason).toBe("budget");
      expect(end.response.content).toEqual([
        { type: "text", text: `The run stopped: its budget was reached: ${reached}.` },
      ]);
      expect(end.usage).toMatchObject(used);
      expect(calls).toBe(used.modelCalls);
    });
  }

  it("reads YIEM_BUDGET and refuses an unknown limit, naming it", () => {
    expect(readRunBudget('{"maxModelCalls": 3, "maxCostUsd": 0.5}')).toEqual({
      maxModelCalls: 3,
      maxCostUsd: 0.5,
    });
    expect(() => readRunBudget('{"maxTurns": 3}')).toThrow("YIEM_BUDGET.maxTurns is not a limit");
  });
});
