import { createOpenAILlmCall, YiemAgent } from "@yiem/core";
import { type ScriptedModelServer, startScriptedModelServer } from "@yiem/testing";
import { afterEach, describe, expect, it } from "vitest";

let server: ScriptedModelServer | undefined;
let agent: YiemAgent | undefined;

afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
});

async function agentWithCap(maxContextBytes: number): Promise<YiemAgent> {
  server = await startScriptedModelServer({ respond: () => ({ kind: "text", text: "noted" }) });
  const llmCall = createOpenAILlmCall({
    model: "m",
    baseURL: server.baseURL,
    apiKey: "k",
    maxRetries: 0,
  });
  agent = new YiemAgent({ llmCall, limits: { maxContextBytes } });
  return agent;
}

function userTextsSent(index: number): string[] {
  const messages = (server?.requests[index]?.body.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>;
  return messages.filter((m) => m.role === "user").map((m) => String(m.content).slice(0, 8));
}

describe("the transcript sent to the model has a cap", () => {
  it("leaves the oldest turns out of the request once the transcript is over the cap, keeping them stored", async () => {
    const agent = await agentWithCap(10_000);
    for (const word of ["first", "second", "third"]) {
      agent.run(`${word} ${"x".repeat(4000)}`);
      await agent.takeResponse();
    }
    expect(userTextsSent(0)).toEqual(["first xx"]);
    expect(userTextsSent(1)).toEqual(["first xx", "second x"]);
    expect(userTextsSent(2)).toEqual(["second x", "third xx"]);
    expect(agent.state.messages.filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("ends the run with a clear error, without calling the model, when the latest turn alone is over the cap", async () => {
    const agent = await agentWithCap(10_000);
    agent.run("y".repeat(20_000));
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toContain("over the 10000-byte context cap");
    expect(server?.requests).toHaveLength(0);
  });
});
