import { readFileSync } from "node:fs";
import {
  type AgentEvent,
  type AgentTool,
  createOpenAILlmCall,
  YiemAgent,
  type YiemAgentOptions,
} from "@yiem/core";
import {
  type ScriptedModelServer,
  type ScriptedReply,
  startScriptedModelServer,
} from "@yiem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { makeTool, textResult } from "../support/toolFixtures.js";

const weatherSchema = {
  title: "weather",
  type: "object",
  properties: { city: { type: "string" }, temperatureC: { type: "number" } },
  required: ["city", "temperatureC"],
  additionalProperties: false,
};

let server: ScriptedModelServer | undefined;
const agents: YiemAgent[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.shutdown();
  await server?.close();
  server = undefined;
});

async function agentWith(
  replies: ScriptedReply[],
  options: Partial<YiemAgentOptions> = {},
  stream = false,
): Promise<{ agent: YiemAgent; events: AgentEvent[] }> {
  server = await startScriptedModelServer({ replies });
  const llmCall = createOpenAILlmCall({
    model: "scripted",
    baseURL: server.baseURL,
    apiKey: "k",
    maxRetries: 0,
    stream,
  });
  const events: AgentEvent[] = [];
  const agent = new YiemAgent({
    llmCall,
    outputSchema: weatherSchema,
    agentEventSink: (event) => void events.push(event),
    ...options,
  });
  agents.push(agent);
  return { agent, events };
}

type Wire = { role: string; content: unknown };

/** The messages the model received in request `index`. */
function sent(index: number): Wire[] {
  return (server?.requests[index]?.body.messages ?? []) as Wire[];
}

function text(value: string): ScriptedReply {
  return { kind: "text", text: value };
}

const lima = { city: "Lima", temperatureC: 19 };

describe("structured output in process (YiemAgent)", () => {
  it("asks for the schema as response_format and returns the valid answer as output", async () => {
    const { agent, events } = await agentWith([text(JSON.stringify(lima))]);
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.stopReason).toBe("stop");
    expect(response.output).toEqual(lima);
    expect(server?.requests).toHaveLength(1);
    expect(server?.requests[0]?.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "weather", schema: weatherSchema },
    });
    const end = events.find((event) => event.type === "agentEnd");
    expect(end).toMatchObject({ type: "agentEnd", output: lima, response: { output: lima } });
    // The transcript keeps the model's answer as it came, without the parsed output.
    const last = agent.state.messages.at(-1);
    expect(last?.role).toBe("assistant");
    expect(last && "output" in last).toBe(false);
  });

  it("sends the validation errors back as a user message and returns the corrected answer", async () => {
    const { agent } = await agentWith([
      text(JSON.stringify({ city: "Lima", temperatureC: "warm", wind: 3 })),
      text(JSON.stringify(lima)),
    ]);
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual(lima);
    expect(server?.requests).toHaveLength(2);
    const correction = sent(1).at(-1);
    expect(correction?.role).toBe("user");
    expect(String(correction?.content)).toContain('"temperatureC" must be number');
    expect(String(correction?.content)).toContain('"wind" is not an allowed property');
    // The correction is a turn like any other: still asked with the schema.
    expect(server?.requests[1]?.body.response_format).toBeDefined();
  });

  it("ends the run with stopReason error and the errors once outputRetries corrections failed", async () => {
    const { agent } = await agentWith(
      [text(JSON.stringify({ city: "Lima" })), text(JSON.stringify({ city: 7, temperatureC: 1 }))],
      { outputRetries: 1 },
    );
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(server?.requests).toHaveLength(2);
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toBe(
      'The final answer did not match the output schema after 1 correction: "city" must be string',
    );
    expect(response.output).toBeUndefined();
    expect(String(sent(1).at(-1)?.content)).toContain('"temperatureC" is required');
  });

  it("asks for the schema on a streamed call too, and parses the streamed answer", async () => {
    const { agent } = await agentWith([text(JSON.stringify(lima))], {}, true);
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual(lima);
    expect(server?.requests[0]?.body.stream).toBe(true);
    expect(server?.requests[0]?.body.response_format).toMatchObject({ type: "json_schema" });
  });

  it("tells the model an answer that is not JSON is not JSON, then takes the JSON one", async () => {
    const { agent } = await agentWith([
      text("It is 19 degrees and cloudy in Lima."),
      text(JSON.stringify(lima)),
    ]);
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual(lima);
    expect(String(sent(1).at(-1)?.content)).toMatch(/the answer is not JSON \(/);
  });

  it("in instructions mode writes the schema into the system prompt and accepts a fenced answer", async () => {
    const { agent } = await agentWith([text(`\`\`\`json\n${JSON.stringify(lima)}\n\`\`\``)], {
      outputMode: "instructions",
      systemPrompt: "You report weather.",
    });
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual(lima);
    expect(server?.requests[0]?.body.response_format).toBeUndefined();
    const system = String(sent(0)[0]?.content);
    expect(system.startsWith("You report weather.\n\n")).toBe(true);
    expect(system).toContain(JSON.stringify(weatherSchema));
    // The agent's own prompt is not changed by the run.
    expect(agent.state.systemPrompt).toBe("You report weather.");
  });

  it("runs tool calls as usual and checks only the final answer", async () => {
    const lookup: AgentTool = makeTool("lookup", {
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
      execute: () => textResult("19 C"),
    });
    const { agent } = await agentWith(
      [
        { kind: "toolCalls", calls: [{ id: "c1", name: "lookup", arguments: { city: "Lima" } }] },
        text(JSON.stringify(lima)),
      ],
      { tools: [lookup], outputStrict: true },
    );
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual(lima);
    expect(server?.requests).toHaveLength(2);
    expect(server?.requests[0]?.body.tools).toHaveLength(1);
    expect(server?.requests[0]?.body.response_format).toMatchObject({
      json_schema: { strict: true },
    });
    expect(sent(1).at(-1)?.role).toBe("tool");
  });

  it("ends a run a tool terminates as before, without checking output", async () => {
    const stop: AgentTool = makeTool("stop", {
      execute: () => textResult("stopped", { terminate: true }),
    });
    const { agent } = await agentWith(
      [{ kind: "toolCalls", calls: [{ id: "c1", name: "stop", arguments: {} }] }],
      { tools: [stop] },
    );
    agent.run("Stop.");
    const response = await agent.takeResponse();

    expect(response.stopReason).toBe("toolUseTerminated");
    expect(response.output).toBeUndefined();
    expect(server?.requests).toHaveLength(1);
  });

  it("ends on a refusal without sending a correction", async () => {
    const refusal = readFileSync(
      new URL("../llm/fixtures/openai-refusal.json", import.meta.url),
      "utf8",
    );
    const { agent } = await agentWith([{ kind: "recorded", body: refusal }]);
    agent.run("Weather in Lima?");
    const response = await agent.takeResponse();

    expect(response.stopReason).toBe("refusal");
    expect(response.output).toBeUndefined();
    expect(server?.requests).toHaveLength(1);
  });

  it("uses validateOutput in place of the schema check, and its value as output", async () => {
    const { agent } = await agentWith([text('{"city":"lima"}'), text('{"city":"Lima"}')], {
      outputSchema: { type: "object" },
      validateOutput: (value) => {
        const city = (value as { city?: string }).city ?? "";
        if (city[0] !== city[0]?.toUpperCase()) return { ok: false, errors: ["capitalise city"] };
        return { ok: true, value: { city, checked: true } };
      },
    });
    agent.run("City?");
    const response = await agent.takeResponse();

    expect(response.output).toEqual({ city: "Lima", checked: true });
    expect(String(sent(1).at(-1)?.content)).toContain("- capitalise city");
  });

  it("refuses an outputSchema ajv cannot compile, and a negative outputRetries, at construction", () => {
    const llmCall = createOpenAILlmCall({ model: "m", baseURL: "http://127.0.0.1:9/v1" });
    expect(() => new YiemAgent({ llmCall, outputSchema: { type: "nonsense" } })).toThrow(
      /outputSchema is not a valid JSON Schema/,
    );
    expect(() => new YiemAgent({ llmCall, outputSchema: {}, outputRetries: -1 })).toThrow(
      /outputRetries must be a whole number/,
    );
  });
});
