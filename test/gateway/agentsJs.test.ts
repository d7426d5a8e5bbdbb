/**
 * OpenAI Agents JS (`@openai/agents-core` and `@openai/agents-openai` 0.9, the newest on the
 * `openai` 6 SDK and Node 20) pointed at the gateway as its model provider: an `Agent` whose
 * model is a Yiem agent, answered through the Open Responses face.
 */
import { Agent, ModelBehaviorError, Runner, tool } from "@openai/agents-core";
import { OpenAIProvider } from "@openai/agents-openai";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { useFaceCluster } from "./faceCluster.js";
import { type GatewayProcess, makeKey, openaiClient } from "./support.js";

const alice = makeKey("alice", { scopes: ["submit", "read"] });
const bob = makeKey("bob", { scopes: ["submit", "read"] });
const faces = useFaceCluster([alice, bob]);
let gateway: GatewayProcess;

beforeAll(() => {
  ({ gateway } = faces);
});

/** A runner whose model provider is the gateway's /v1 with `secret`, on the Responses API. */
function yiemRunner(secret: string = alice.secret): Runner {
  const modelProvider = new OpenAIProvider({
    baseURL: `${gateway.url}/v1`,
    apiKey: secret,
    useResponses: true,
  });
  return new Runner({ modelProvider, tracingDisabled: true });
}

/** An Agents JS agent whose model is the gateway's default agent. */
const yiemAgent = new Agent({ name: "assistant", model: "default" });

describe("OpenAI Agents JS with the gateway as its model provider", () => {
  it("run() is answered by a Yiem run: its final output, a response the key can retrieve", async () => {
    const result = await yiemRunner().run(yiemAgent, "hello eve");
    expect(result.finalOutput).toBe("hi eve");
    const id = String(result.lastResponseId);
    expect(id).toMatch(/^resp_/);
    const response = await openaiClient(gateway.url, alice.secret).responses.retrieve(id);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("hi eve");
    await expect(openaiClient(gateway.url, bob.secret).responses.retrieve(id)).rejects.toThrow(
      /404/,
    );
  });

  it("previousResponseId continues the Yiem session: the agent hears the earlier input", async () => {
    const first = await yiemRunner().run(yiemAgent, "hello eve");
    const next = await yiemRunner().run(yiemAgent, "recall", {
      previousResponseId: first.lastResponseId,
    });
    expect(next.finalOutput).toBe("heard: hello eve, recall");
  });

  it("streams: the text arrives as several deltas, then the final output", async () => {
    const result = await yiemRunner().run(yiemAgent, "hello bob", { stream: true });
    const deltas: string[] = [];
    for await (const event of result) {
      if (event.type !== "raw_model_stream_event") continue;
      if (event.data.type === "output_text_delta") deltas.push(event.data.delta);
    }
    await result.completed;
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("hi bob");
    expect(result.finalOutput).toBe("hi bob");
  });

  it("the agent's own function tools are not offered to the Yiem agent and never run", async () => {
    let ran = false;
    const local = tool({
      name: "localLookup",
      description: "a tool of the client",
      parameters: z.object({ query: z.string() }),
      execute: async () => {
        ran = true;
        return "local";
      },
    });
    const agent = new Agent({ name: "with-tools", model: "default", tools: [local] });
    const result = await yiemRunner().run(agent, "hello tom");
    expect(result.finalOutput).toBe("hi tom");
    expect(ran).toBe(false);
  });

  it("does not compose when the Yiem agent calls its tools: their function_call items are taken as the client's to run", async () => {
    const error = await yiemRunner()
      .run(yiemAgent, "pair")
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect((error as Error).message).toMatch(/Tool sleepFor not found in agent assistant/);
  });
});
