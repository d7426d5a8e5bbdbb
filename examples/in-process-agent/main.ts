/**
 * A YiemAgent with one tool, in this process: no Redis, no cluster. Asks the question given
 * on the command line, prints each tool call as it starts and ends, then the answer.
 *
 *   npx tsx --conditions=yiem-source examples/in-process-agent/main.ts "What is 21 °C in °F?"
 *
 * The model is any OpenAI-compatible server: OPENAI_BASE_URL, OPENAI_API_KEY, YIEM_MODEL.
 */
import { type AgentTool, createOpenAILlmCall, YiemAgent } from "@yiem/core";

/** `celsiusToFahrenheit`: a tool defined inline (a tool file would export it from `getTool()`). */
const celsiusToFahrenheit: AgentTool = {
  name: "celsiusToFahrenheit",
  label: "Celsius to Fahrenheit",
  description: "Converts a temperature from degrees Celsius to degrees Fahrenheit",
  inputSchema: {
    type: "object",
    properties: { celsius: { type: "number", description: "The temperature in °C" } },
    required: ["celsius"],
  },
  parallelToolExecute: true,
  execute: (_toolCallId, args) => {
    const fahrenheit = (Number(args.celsius) * 9) / 5 + 32;
    return {
      content: [{ type: "text", text: `${args.celsius} °C is ${fahrenheit} °F` }],
      details: { fahrenheit },
    };
  },
};

const question = process.argv[2] ?? "What is 21 °C in Fahrenheit?";

const agent = new YiemAgent({
  llmCall: createOpenAILlmCall({ model: process.env.YIEM_MODEL ?? "gpt-4o-mini" }),
  tools: [celsiusToFahrenheit],
  agentEventSink: (event) => {
    if (event.type === "toolExecStart") {
      console.log(`→ ${event.toolName}(${JSON.stringify(event.arguments)})`);
    }
    if (event.type === "toolExecEnd") {
      const text = event.result.content.map((block) => (block.type === "text" ? block.text : ""));
      console.log(`${event.isError ? "✖" : "✔"} ${event.toolName}: ${text.join("")}`);
    }
  },
});

agent.run(question);
const answer = await agent.takeResponse();
const text = answer.content.map((block) => (block.type === "text" ? block.text : "")).join("");
console.log(answer.stopReason === "error" ? `error: ${answer.errorMessage}` : text);
await agent.shutdown();
process.exitCode = answer.stopReason === "error" ? 1 : 0;
