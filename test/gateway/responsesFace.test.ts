import OpenAI from "openai";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { beforeAll, describe, expect, it } from "vitest";
import { useFaceCluster } from "./faceCluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openaiClient,
  runGatewayExample,
  type TestKey,
} from "./support.js";

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read"] });
const faces = useFaceCluster([alice, bob]);
let gateway: GatewayProcess;
let otherGateway: GatewayProcess;

beforeAll(() => {
  ({ gateway, otherGateway } = faces);
});

const openai = (key: TestKey, on: GatewayProcess = gateway) =>
  openaiClient(on.url, key.secret, 30_000);

/** The items of `response` of one type, as plain objects. */
function itemsOf(response: Response, type: string) {
  return response.output.filter((item) => item.type === type) as unknown as Array<
    Record<string, unknown>
  >;
}

/** Reads `stream` to its end (or until `stop` says so after an event): its events, in order. */
async function collect(
  stream: AsyncIterable<ResponseStreamEvent>,
  stop: (event: ResponseStreamEvent) => boolean = () => false,
): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (stop(event)) break;
  }
  return events;
}

/** The text deltas among `events`, joined. */
function deltasOf(events: ResponseStreamEvent[]): string[] {
  return events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
}

/** Reads the response on `on` until `done` says it is, 20 s at most. */
async function retrieveUntil(
  id: string,
  done: (response: Response) => boolean,
  on: GatewayProcess = gateway,
): Promise<Response> {
  const until = Date.now() + 20_000;
  let response = await openai(alice, on).responses.retrieve(id);
  while (!done(response) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    response = await openai(alice, on).responses.retrieve(id);
  }
  return response;
}

describe("Open Responses: POST /v1/responses", () => {
  it("answers a run of two parallel tool calls: the calls and their outputs in call order, the text, usage", async () => {
    const response = await openai(alice).responses.create({ model: "default", input: "pair" });
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.model).toBe("default");
    const calls = itemsOf(response, "function_call");
    expect(calls.map((c) => [c.call_id, c.name])).toEqual([
      ["first", "sleepFor"],
      ["second", "sleepFor"],
    ]);
    expect(JSON.parse(String(calls[0]?.arguments))).toMatchObject({ label: "first" });
    const outputs = itemsOf(response, "function_call_output");
    expect(outputs.map((o) => [o.call_id, o.output])).toEqual([
      ["first", "first done"],
      ["second", "second done"],
    ]);
    expect(response.output.map((item) => item.type)).toEqual([
      "function_call",
      "function_call",
      "function_call_output",
      "function_call_output",
      "message",
    ]);
    expect(response.output_text).toBe("done: first done | second done");
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
  });

  it("streams the Responses events: created, the item, its text as deltas, done, completed, numbered in order", async () => {
    const stream = await openai(alice).responses.create({
      model: "default",
      input: [{ role: "user", content: [{ type: "input_text", text: "hello eve" }] }],
      stream: true,
    });
    const events = await collect(stream);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.at(-1)).toBe("response.completed");
    for (const type of [
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]) {
      expect(types).toContain(type);
    }
    const deltas = deltasOf(events);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("hi eve");
    const numbers = events.map((event) => event.sequence_number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
    const completed = events.at(-1) as { response: Response };
    expect(completed.response.status).toBe("completed");
    expect(completed.response.usage?.total_tokens).toBeGreaterThan(0);

    // The SDK's own stream helper builds the same response from these events.
    const helper = openai(alice).responses.stream({ model: "default", input: "hello fay" });
    const final = await helper.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output).toMatchObject([
      { type: "message", content: [{ type: "output_text", text: "hi fay" }] },
    ]);
  });

  it("answers a background response at once, and another gateway resumes its stream after a sequence number", async () => {
    const created = await openai(alice).responses.create({
      model: "default",
      input: "slow",
      background: true,
    });
    expect(["queued", "in_progress"]).toContain(created.status);

    // Read the first part of its stream on one gateway, and drop it at the call.
    const first = await collect(
      await openai(alice).responses.retrieve(created.id, { stream: true }),
      (event) => event.type === "response.output_item.added",
    );
    const last = first.at(-1)?.sequence_number ?? -1;
    expect(first.at(-1)?.type).toBe("response.output_item.added");

    // Another gateway process takes it up after that number: the rest, nothing twice.
    const rest = await collect(
      await openai(alice, otherGateway).responses.retrieve(created.id, {
        stream: true,
        starting_after: last,
      }),
    );
    expect(rest.every((event) => event.sequence_number > last)).toBe(true);
    expect(rest.map((e) => e.type)).not.toContain("response.created");
    expect(rest.at(-1)?.type).toBe("response.completed");
    expect([...first, ...rest].filter((e) => e.type === "response.output_item.added")).toHaveLength(
      3, // the call, its output, the message
    );
    expect(deltasOf(rest).join("")).toBe("done: nap done");

    // A stream cut inside the text resumes inside it: the unsent characters only.
    const whole = await collect(
      await openai(alice, otherGateway).responses.retrieve(created.id, { stream: true }),
    );
    const cutAt = whole.find((e) => e.type === "response.output_text.delta");
    const afterCut = await collect(
      await openai(alice).responses.retrieve(created.id, {
        stream: true,
        starting_after: (cutAt?.sequence_number ?? 0) - 3,
      }),
    );
    const sent = cutAt?.type === "response.output_text.delta" ? cutAt.delta.length - 3 : 0;
    expect(deltasOf(afterCut).join("")).toBe("done: nap done".slice(sent));

    const read = await openai(alice, otherGateway).responses.retrieve(created.id);
    expect(read.status).toBe("completed");
    expect(read.output_text).toBe("done: nap done");
    expect(read.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("cancels a response: the durable abort of its run", async () => {
    const created = await openai(alice).responses.create({
      model: "default",
      input: "hold c1",
      background: true,
    });
    const running = await retrieveUntil(
      created.id,
      (r) => itemsOf(r, "function_call").length > 0,
      otherGateway,
    );
    expect(running.status).toBe("in_progress");
    const cancelled = await openai(alice, otherGateway).responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    const read = await openai(alice).responses.retrieve(created.id);
    expect(read.status).toBe("cancelled");

    // One cancelled as soon as it is made is stopped once a coordinator takes its run up.
    const early = await openai(alice).responses.create({ input: "hold c2", background: true });
    expect((await openai(alice).responses.cancel(early.id)).status).toBe("cancelled");
  });

  it("says a call awaiting approval in Responses' terms; approved, the same response completes", async () => {
    const parked = await openai(alice).responses.create({ model: "default", input: "approve a1" });
    expect(parked.status).toBe("incomplete");
    expect(parked.incomplete_details?.reason).toBe("awaiting_approval");
    const [request] = itemsOf(parked, "mcp_approval_request");
    expect(request).toMatchObject({ id: "call-a1", name: "ledgerApproval", server_label: "yiem" });
    const yiem = (parked as unknown as { yiem: { sessionId: string; approvals: unknown[] } }).yiem;
    expect(yiem.approvals).toMatchObject([{ toolCallId: "call-a1" }]);

    // Its stream ends there too, with response.incomplete after the approval request.
    const waiting = await collect(
      await openai(alice).responses.retrieve(parked.id, { stream: true }),
    );
    const end = waiting.at(-1);
    expect(end?.type).toBe("response.incomplete");
    expect((end as { response: Response }).response.incomplete_details?.reason).toBe(
      "awaiting_approval",
    );
    const added = waiting.filter((e) => e.type === "response.output_item.added");
    expect(added.map((e) => (e as { item: { type: string } }).item.type)).toEqual([
      "function_call",
      "mcp_approval_request",
    ]);

    const decided = await callGateway(gateway.url, alice.secret, "POST", "/v1/approvals", {
      body: { sessionId: yiem.sessionId, toolCallId: "call-a1", approved: true },
    });
    expect(decided.status).toBe(200);
    const done = await retrieveUntil(parked.id, (r) => r.status === "completed", otherGateway);
    expect(done.status).toBe("completed");
    expect(itemsOf(done, "function_call_output").map((o) => o.call_id)).toEqual(["call-a1"]);
    expect(done.output_text).toMatch(/^done: /);

    // The stream resumed after its incomplete end (on the other gateway) carries on from there.
    const rest = await collect(
      await openai(alice, otherGateway).responses.retrieve(parked.id, {
        stream: true,
        starting_after: end?.sequence_number ?? 0,
      }),
    );
    expect(
      rest
        .filter((e) => e.type === "response.output_item.added")
        .map((e) => (e as { item: { type: string } }).item.type),
    ).toEqual(["function_call_output", "message"]);
    expect(rest.at(-1)?.type).toBe("response.completed");
  });

  it("answers a response sent while its session's run is busy with the run that takes it in", async () => {
    const busy = await openai(alice).responses.create({ input: "slow", background: true });
    const joined = await openai(alice, otherGateway).responses.create({
      input: "hello zed",
      previous_response_id: busy.id,
    });
    expect(joined.status).toBe("completed");
    expect(joined.output_text).toBe("hi zed"); // its input, taken in at the run's next turn
    const first = await retrieveUntil(busy.id, (r) => r.status === "completed");
    expect(first.output_text).toMatch(/hi zed$/);
  });

  it("continues the session of previous_response_id", async () => {
    const first = await openai(alice).responses.create({ model: "default", input: "hello ada" });
    expect(first.output_text).toBe("hi ada");
    const next = await openai(alice, otherGateway).responses.create({
      model: "default",
      input: "recall",
      previous_response_id: first.id,
    });
    expect(next.output_text).toBe("heard: hello ada, recall");
  });

  it("answers 404 to another key for a response, its stream, its cancel and its session; 400 to input it cannot take", async () => {
    const mine = await openai(alice).responses.create({
      model: "default",
      input: "hold b1",
      background: true,
    });
    const refusals = await Promise.all([
      openai(bob)
        .responses.retrieve(mine.id)
        .catch((err: unknown) => err),
      openai(bob)
        .responses.retrieve(mine.id, { stream: true, starting_after: 0 })
        .catch((err: unknown) => err),
      openai(bob)
        .responses.cancel(mine.id)
        .catch((err: unknown) => err),
      openai(bob)
        .responses.create({ model: "default", input: "recall", previous_response_id: mine.id })
        .catch((err: unknown) => err),
      openai(bob)
        .responses.retrieve("resp_nope")
        .catch((err: unknown) => err),
    ]);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(OpenAI.NotFoundError);
    const toolOutput = await openai(alice)
      .responses.create({
        model: "default",
        input: [{ type: "function_call_output", call_id: "c1", output: "42" }],
      })
      .catch((err: unknown) => err);
    expect(toolOutput).toBeInstanceOf(OpenAI.BadRequestError);
    expect((toolOutput as InstanceType<typeof OpenAI.APIError>).param).toBe("input");
    const still = await openai(alice).responses.retrieve(mine.id);
    expect(["queued", "in_progress"]).toContain(still.status);
    await openai(alice).responses.cancel(mine.id);
  });
});

describe("the OpenAPI document", () => {
  it("lists the face's routes with their scopes", async () => {
    const doc = await callGateway(gateway.url, undefined, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/v1/responses"].post["x-scope"]).toBe("submit");
    expect(doc.body.paths["/v1/responses/{id}"].get["x-scope"]).toBe("read");
    expect(doc.body.paths["/v1/responses/{id}/cancel"].post["x-scope"]).toBe("submit");
  });
});

describe("docs/GATEWAY.md", () => {
  it("runs the Open Responses example as written, with node and the openai package", async () => {
    const lines = await runGatewayExample(
      "responsesFace.test.ts",
      "responses.mjs",
      gateway.url,
      alice.secret,
    );
    expect(lines).toEqual([
      "completed function_call,function_call_output,message done: noon in Lima",
      "done: noon in Lima | noon in Oslo", // the model reads every result the session holds
      "completed",
      "",
    ]);
  });
});
