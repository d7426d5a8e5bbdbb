/**
 * The faces clients already speak, against a real cluster (Redis, a coordinator, a worker)
 * through a real gateway process: the AI SDK's chat (`POST /v1/chat`) read by the `ai`
 * package's own `DefaultChatTransport` and `readUIMessageStream`, and the OpenAI-compatible
 * chat completions and models read by the `openai` SDK, streamed and not, with scopes and
 * ownership.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openaiClient,
  sendChatMessages,
  startGatewayProcess,
  type TestKey,
  textOf,
  type Wire,
  writeKeysFile,
} from "./support.js";

/**
 * The model: `hello <x>` answers `hi <x>` (streamed in 4 deltas, after thinking `pondering
 * <x>`); `steps <n>` calls `sleepFor` reporting `n` steps; `approve <label>` calls
 * `ledgerApproval` (which waits for a decision); after tool results it answers `done:
 * <results>`; `recall` answers with the user messages the session holds.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const users = messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
  const [verb = "", arg = "x"] = (users.at(-1) ?? "").split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
    return { kind: "text", text: `done: ${results.join(" | ")}`, textChunks: 3 };
  }
  if (verb === "steps") {
    const calls = [
      { id: "walk", name: "sleepFor", arguments: { ms: 300, steps: Number(arg), label: "walk" } },
    ];
    return { kind: "toolCalls", calls };
  }
  if (verb === "approve") {
    return {
      kind: "toolCalls",
      calls: [{ id: `call-${arg}`, name: "ledgerApproval", arguments: { label: arg } }],
    };
  }
  if (verb === "recall") return { kind: "text", text: `heard: ${users.join(", ")}` };
  return { kind: "text", text: `hi ${arg}`, thinking: `pondering ${arg}`, textChunks: 4 };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read"] });
const onlyOps = makeKey("only-ops", { scopes: ["submit", "read"], agents: ["ops"] });
const reader = makeKey("reader", { scopes: ["read"] });
let gateway: GatewayProcess;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "yiem-faces-"));
  const file = join(dir, "keys.jsonl");
  await writeKeysFile(file, [alice, bob, onlyOps, reader]);
  gateway = await startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: file });
}, 90_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
});

/** A user message as `useChat` makes one. */
function userMessage(text: string): UIMessage {
  return {
    id: `m-${Math.random().toString(36).slice(2)}`,
    role: "user",
    parts: [{ type: "text", text }],
  };
}

/**
 * Sends `messages` as `useChat` does (`DefaultChatTransport({ api: "/v1/chat" })`) and reads
 * the answer with the AI SDK's own reader: every state of the answer message, in order.
 */
async function chat(key: TestKey, chatId: string, messages: UIMessage[], from?: UIMessage) {
  const stream = await sendChatMessages(gateway.url, key.secret, chatId, messages);
  const states: UIMessage[] = [];
  for await (const message of readUIMessageStream<UIMessage>({
    stream,
    terminateOnError: true,
    ...(from ? { message: from } : {}),
  })) {
    states.push(structuredClone(message));
  }
  const last = states.at(-1);
  if (!last) throw new Error("the chat answered no message");
  return { states, message: last };
}

function textParts(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

describe("AI SDK UI: POST /v1/chat", () => {
  it("streams text deltas and reasoning, finishes with the run's usage, and keeps the chat as its session", async () => {
    const chatId = `chat-${Date.now()}`;
    const first = userMessage("hello ada");
    const { states, message } = await chat(alice, chatId, [first]);
    expect(textParts(message)).toBe("hi ada");
    const reasoning = message.parts.find((part) => part.type === "reasoning");
    expect(reasoning).toMatchObject({ text: "pondering ada" });
    // The text grew delta by delta: the reader saw partial texts before the whole one.
    const partials = new Set(states.map(textParts).filter((t) => t !== "" && t !== "hi ada"));
    expect(partials.size).toBeGreaterThan(0);
    const metadata = message.metadata as {
      sessionId: string;
      usage: { totalTokens: number; modelCalls: number };
    };
    expect(metadata.sessionId).toBe(chatId);
    expect(metadata.usage.modelCalls).toBe(1);
    expect(metadata.usage.totalTokens).toBeGreaterThan(0);

    const again = await chat(alice, chatId, [first, message, userMessage("recall")]);
    expect(textParts(again.message)).toBe("heard: hello ada, recall");
    const session = await callGateway(gateway.url, alice.secret, "GET", `/v1/sessions/${chatId}`);
    expect(session.status).toBe(200);
    expect(session.body.agent).toBe("default");
  });

  it("shows a tool call as a tool part: its input, its progress, its output, then the answer", async () => {
    const { states, message } = await chat(alice, `tools-${Date.now()}`, [userMessage("steps 2")]);
    const tool = message.parts.find((part) => part.type === "tool-sleepFor") as
      | { state: string; input: unknown; output: { content: Array<{ text: string }> } }
      | undefined;
    expect(tool?.state).toBe("output-available");
    expect(tool?.input).toMatchObject({ label: "walk", steps: 2 });
    expect(tool?.output.content[0]?.text).toBe("walk done");
    const progress = states.flatMap((state) =>
      state.parts.filter(
        (part) =>
          part.type === "tool-sleepFor" && "preliminary" in part && part.preliminary === true,
      ),
    );
    expect(progress.length).toBeGreaterThan(0);
    expect(textParts(message)).toBe("done: walk done");
  });

  /** Asks for `approve <label>` in a new chat of `key`: the answer ends at the call awaiting approval. */
  async function parkAt(key: TestKey, label: string) {
    const chatId = `approve-${label}-${Date.now()}`;
    const question = userMessage(`approve ${label}`);
    const parked = await chat(key, chatId, [question]);
    return { chatId, question, parked: parked.message };
  }

  /** The answer as `addToolApprovalResponse` leaves it: the call's part `approval-responded`. */
  function respondTo(
    message: UIMessage,
    approval: { id: string; approved: boolean; reason?: string },
  ) {
    const responded = structuredClone(message);
    for (const part of responded.parts) {
      if (part.type === "tool-ledgerApproval")
        Object.assign(part, { state: "approval-responded", approval });
    }
    return responded;
  }

  it("ends the answer at a call awaiting approval, and resumes the run from the approval response (recorded as the key's)", async () => {
    const { chatId, question, parked } = await parkAt(alice, "a1");
    const part = parked.parts.find((p) => p.type === "tool-ledgerApproval") as
      | { state: string; toolCallId: string; approval?: { id: string } }
      | undefined;
    expect(part?.state).toBe("approval-requested");
    expect(part?.approval?.id).toBe("call-a1");
    expect(parked.metadata).toMatchObject({ awaitingApproval: true });
    const waiting = await callGateway(
      gateway.url,
      alice.secret,
      "GET",
      `/v1/approvals?sessionId=${chatId}`,
    );
    expect(waiting.body.approvals.map((a: { callKey: string }) => a.callKey)).toEqual(["call-a1"]);

    const responded = respondTo(parked, { id: "call-a1", approved: true });
    const resumed = await chat(alice, chatId, [question, responded], responded);
    expect(resumed.message.id).toBe(parked.id);
    const done = resumed.message.parts.find((p) => p.type === "tool-ledgerApproval") as
      | { state: string }
      | undefined;
    expect(done?.state).toBe("output-available");
    expect(textParts(resumed.message)).toMatch(/^done: /);
    const session = await callGateway(gateway.url, alice.secret, "GET", `/v1/sessions/${chatId}`);
    const result = session.body.transcript.find(
      (m: { role: string; toolCallId?: string }) =>
        m.role === "toolResult" && m.toolCallId === "call-a1",
    );
    expect(result.details.approval).toMatchObject({ decision: "approved", by: "alice" });
  });

  it("shows a denied call as denied, and refuses approval responses from a key without the approve scope", async () => {
    const theirs = await parkAt(bob, "b1");
    const refused = await callGateway(gateway.url, bob.secret, "POST", "/v1/chat", {
      body: {
        id: theirs.chatId,
        messages: [theirs.question, respondTo(theirs.parked, { id: "call-b1", approved: true })],
      },
    });
    expect(refused.status).toBe(403);

    const { chatId, question, parked } = await parkAt(alice, "d1");
    const responded = respondTo(parked, { id: "call-d1", approved: false, reason: "not today" });
    const resumed = await chat(alice, chatId, [question, responded], responded);
    const denied = resumed.message.parts.find((p) => p.type === "tool-ledgerApproval") as
      | { state: string }
      | undefined;
    expect(denied?.state).toBe("output-denied");
    expect(textParts(resumed.message)).toContain("denied by alice: not today");
  });

  it("refuses another key's chat (404), an agent the key may not use (403), a key without submit (403)", async () => {
    const chatId = `owned-${Date.now()}`;
    await chat(alice, chatId, [userMessage("hello mine")]);
    const post = (key: TestKey, body: unknown) =>
      callGateway(gateway.url, key.secret, "POST", "/v1/chat", { body });
    const theirs = await post(bob, { id: chatId, messages: [userMessage("hello theirs")] });
    expect(theirs.status).toBe(404);
    const agent = await post(onlyOps, {
      id: `ops-${Date.now()}`,
      agent: "default",
      messages: [userMessage("hi")],
    });
    expect(agent.status).toBe(403);
    const readOnly = await post(reader, { id: `r-${Date.now()}`, messages: [userMessage("hi")] });
    expect(readOnly.status).toBe(403);
    const noText = await post(alice, {
      id: `e-${Date.now()}`,
      messages: [{ id: "x", role: "user", parts: [] }],
    });
    expect(noText.status).toBe(400);
    expect(noText.body.error.field).toBe("messages");
  });
});

describe("OpenAI-compatible: POST /v1/chat/completions, GET /v1/models", () => {
  const openai = (key: TestKey) => openaiClient(gateway.url, key.secret, 30_000);

  it("answers one chat.completion with usage, and continues the session named by X-Yiem-Session", async () => {
    const { data, response } = await openai(alice)
      .chat.completions.create({
        model: "default",
        messages: [{ role: "user", content: "hello bea" }],
      })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]?.message.content).toBe("hi bea");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    const sessionId = response.headers.get("x-yiem-session") ?? "";
    expect(sessionId).not.toBe("");

    const next = await openai(alice).chat.completions.create(
      { model: "default", messages: [{ role: "user", content: "recall" }] },
      { headers: { "X-Yiem-Session": sessionId } },
    );
    expect(next.choices[0]?.message.content).toBe("heard: hello bea, recall");
  });

  it("streams chat.completion.chunks: the text as it comes, tool calls that ran left out, usage last", async () => {
    const stream = await openai(alice).chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: "steps 2" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    const finishes: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      const choice = chunk.choices[0];
      expect(choice?.delta.tool_calls).toBeUndefined();
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finishes.push(choice.finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.join("")).toBe("done: walk done");
    expect(deltas.length).toBeGreaterThan(1);
    expect(finishes).toEqual(["stop"]);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it("lists the agents a key may use as models, and refuses others in OpenAI's error shape", async () => {
    const models = await openai(alice).models.list();
    expect(models.data.map((model) => model.id)).toContain("default");
    const opsModels = await openai(onlyOps).models.list();
    expect(opsModels.data.map((model) => model.id)).not.toContain("default");

    const refused = await openai(onlyOps)
      .chat.completions.create({ model: "default", messages: [{ role: "user", content: "hi" }] })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe("forbidden");
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).toBe("agent");

    const first = await openai(alice)
      .chat.completions.create({
        model: "default",
        messages: [{ role: "user", content: "hello c" }],
      })
      .withResponse();
    const aliceSession = first.response.headers.get("x-yiem-session") ?? "";
    const stolen = await openai(bob)
      .chat.completions.create(
        { model: "default", messages: [{ role: "user", content: "recall" }] },
        { headers: { "X-Yiem-Session": aliceSession } },
      )
      .catch((err: unknown) => err);
    expect(stolen).toBeInstanceOf(OpenAI.NotFoundError);

    const badKey = await openaiClient(gateway.url, "nope")
      .models.list()
      .catch((err: unknown) => err);
    expect(badKey).toBeInstanceOf(OpenAI.AuthenticationError);
    const raw = await callGateway(gateway.url, reader.secret, "POST", "/v1/chat/completions", {
      body: { model: "default", messages: [{ role: "user", content: "hi" }] },
    });
    expect(raw.status).toBe(403);
    expect(raw.body.error).toMatchObject({ type: "permission_error", code: "forbidden" });
  });

  it("reports a run the coordinators refused: a 400, or in a stream an error event, on both faces", async () => {
    const messages = [{ role: "user" as const, content: "hi" }];
    const whole = await openai(onlyOps)
      .chat.completions.create({ model: "ops", messages })
      .catch((err: unknown) => err);
    expect(whole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((whole as InstanceType<typeof OpenAI.APIError>).code).toBe("run_refused");
    expect((whole as Error).message).toContain('unknown agent "ops"');

    const streamed = await (async () => {
      const stream = await openai(onlyOps).chat.completions.create({
        model: "ops",
        messages,
        stream: true,
      });
      for await (const _ of stream) {
        // the role chunk comes first, then the error
      }
    })().catch((err: unknown) => err);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect((streamed as Error).message).toContain('unknown agent "ops"');

    const transport = new DefaultChatTransport<UIMessage>({
      api: `${gateway.url}/v1/chat`,
      headers: { Authorization: `Bearer ${onlyOps.secret}` },
      body: { agent: "ops" },
    });
    const stream = await transport.sendMessages({
      trigger: "submit-message",
      chatId: `refused-${Date.now()}`,
      messageId: undefined,
      messages: [userMessage("hi")],
      abortSignal: AbortSignal.timeout(30_000),
    });
    const errors: unknown[] = [];
    for await (const _ of readUIMessageStream({ stream, onError: (err) => errors.push(err) })) {
      // the start, then the error
    }
    expect(String(errors[0])).toContain('unknown agent "ops"');
  });

  it("lists the faces in the OpenAPI document", async () => {
    const doc = await callGateway(gateway.url, undefined, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/v1/chat"].post["x-scope"]).toBe("submit");
    expect(doc.body.paths["/v1/chat/completions"].post.requestBody).toBeDefined();
    expect(doc.body.paths["/v1/models"].get["x-scope"]).toBe("read");
  });
});
