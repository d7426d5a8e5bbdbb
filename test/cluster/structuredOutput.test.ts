/**
 * Structured output through a coordinator: the loop it runs asks the model for the schema,
 * sends an invalid final answer's errors back, and the valid answer is the `output` of the
 * request job's return value, of `waitForResponse`'s response and of the `agentEnd` event.
 */
import { randomUUID } from "node:crypto";
import type { AgentTool, BusEvent, CoordinatorJobResult } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

const weatherSchema = {
  title: "weather",
  type: "object",
  properties: { city: { type: "string" }, temperatureC: { type: "number" } },
  required: ["city", "temperatureC"],
  additionalProperties: false,
};
const lima = { city: "Lima", temperatureC: 19 };

type Wire = { role: string; content: unknown };

/**
 * By the request's first user text: `tool` looks the weather up, then answers; `fix` answers
 * without the temperature until corrected; `never` never gets it right.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const scenario = String(messages.find((m) => m.role === "user")?.content ?? "");
  const corrected = messages.at(-1)?.role === "user" && messages.length > 2;
  if (scenario.startsWith("tool") && messages.at(-1)?.role !== "tool")
    return { kind: "toolCalls", calls: [{ id: "w-1", name: "lookup", arguments: {} }] };
  if (scenario.startsWith("fix") && corrected) return { kind: "text", text: JSON.stringify(lima) };
  if (scenario.startsWith("fix") || scenario.startsWith("never"))
    return { kind: "text", text: '{"city":"Lima"}' };
  return { kind: "text", text: JSON.stringify(lima) };
}

const lookup: AgentTool = {
  name: "lookup",
  label: "Lookup",
  description: "Looks the weather up",
  inputSchema: { type: "object", properties: {} },
  execute: () => ({ content: [{ type: "text", text: "19 C" }], details: {} }),
};

const local = useInProcessCoordinator({
  respond,
  tools: [lookup],
  storeName: "structured-output",
  coordinator: { outputSchema: weatherSchema, outputRetries: 1 },
});
const plain = usePlainCoordinatorQueue(local);

/** The bodies the model received for the session whose first user text is `input`. */
function requestsFor(input: string) {
  return local.model.requests.filter((request) =>
    ((request.body.messages ?? []) as Wire[]).some((m) => m.role === "user" && m.content === input),
  );
}

async function agentEndOf(sessionId: string, runId: string): Promise<BusEvent> {
  const events = local.client.events(sessionId, { fromStart: true, untilAgentEnd: true, runId });
  let last: BusEvent | undefined;
  for await (const event of events) last = event;
  if (!last) throw new Error("no agentEnd");
  return last;
}

describe("structured output through a coordinator", () => {
  it("returns the valid answer as output in the job's return value, after a tool call", async () => {
    const input = `tool ${randomUUID()}`;
    const job = await plain.queue.add("ask", { input });
    const result = (await job.waitUntilFinished(plain.events, 30_000)) as CoordinatorJobResult;

    expect(result.output).toEqual(lima);
    expect(result.response.output).toEqual(lima);
    const sent = requestsFor(input);
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(request.body.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "weather", schema: weatherSchema },
      });
    }
  });

  it("sends the errors back, and gives the corrected output to waitForResponse and agentEnd", async () => {
    const input = `fix ${randomUUID()}`;
    const { sessionId, runId } = await local.client.send(input);
    const response = await local.client.waitForResponse(runId, { timeoutMs: 30_000 });

    expect(response.output).toEqual(lima);
    const sent = requestsFor(input);
    expect(sent).toHaveLength(2);
    const correction = ((sent[1]?.body.messages ?? []) as Wire[]).at(-1);
    expect(correction?.role).toBe("user");
    expect(String(correction?.content)).toContain('"temperatureC" is required');
    const end = await agentEndOf(sessionId, runId);
    expect(end).toMatchObject({ type: "agentEnd", output: lima });
    // The request job, read back later, keeps the output in its return value.
    const job = await Job.fromId(plain.queue, runId);
    expect(job?.returnvalue?.output).toEqual(lima);
  });

  it("fails the run with the errors once outputRetries corrections did not help", async () => {
    const input = `never ${randomUUID()}`;
    const job = await plain.queue.add("ask", { input });
    const result = (await job.waitUntilFinished(plain.events, 30_000)) as CoordinatorJobResult;

    expect(result.response.stopReason).toBe("error");
    expect(result.response.errorMessage).toBe(
      'The final answer did not match the output schema after 1 correction: "temperatureC" is required',
    );
    expect("output" in result).toBe(false);
    expect(requestsFor(input)).toHaveLength(2);
  });
});
