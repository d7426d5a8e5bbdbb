/**
 * Issue 34, findings 5, 6 and 7, through a real gateway process on a real cluster: calls
 * awaiting approval inside a child run are their root owner's to list and decide, through
 * the gateway's REST routes and both chat faces, and nobody else's (404); each chat face ends
 * a run that waits for approval in its own protocol instead of holding the request; after a
 * handoff, the session's current agent answers a follow-up that names none, and a key's
 * `agents` is checked against it; a new session naming no agent goes to the coordinators'
 * default (the only agent), or is refused when there is none. One cluster for every scenario.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { YiemClient } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openaiClient,
  startGatewayProcess,
  type TestKey,
  textOf,
  type Wire,
  writeKeysFile,
} from "./support.js";

/**
 * The models: lead's `delegate <label>` calls its helper, whose `approve <label>` calls
 * `ledgerApproval` (which waits for a decision); lead's `direct <label>` calls it itself;
 * after tool results each answers with them. support's `transfer` hands off to billing;
 * billing and solo echo the last user message.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = textOf(messages.findLast((m) => m.role === "user")?.content);
  const [verb = "", label = "x"] = lastUser.split(" ");
  const results = messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
  const afterTool = messages.at(-1)?.role === "tool";
  const model = String(request.body.model);
  if (model === "lead-model") {
    if (afterTool) return { kind: "text", text: `lead: ${results.at(-1)}` };
    if (verb === "direct") {
      return {
        kind: "toolCalls",
        calls: [{ id: `root-${label}`, name: "ledgerApproval", arguments: { label } }],
      };
    }
    return {
      kind: "toolCalls",
      calls: [
        { id: `h-${label}`, name: "agent__helper", arguments: { input: `approve ${label}` } },
      ],
    };
  }
  if (model === "helper-model") {
    if (afterTool) return { kind: "text", text: `helper: ${results.at(-1)}` };
    return {
      kind: "toolCalls",
      calls: [{ id: `c-${label}`, name: "ledgerApproval", arguments: { label } }],
    };
  }
  if (model === "support-model") {
    if (afterTool) return { kind: "text", text: "support: handed over" };
    if (verb === "transfer") {
      return { kind: "toolCalls", calls: [{ name: "transfer_to_billing", arguments: {} }] };
    }
    return { kind: "text", text: `support: ${lastUser}` };
  }
  return { kind: "text", text: `${model.replace("-model", "")}: ${lastUser}` };
}

/** Four agents, none named `default`: lead calls helper; support hands off to billing. */
function agentsFile(): string {
  return writeAgentsYaml([
    "agents:",
    "  lead:",
    "    instructions: You lead.",
    "    model: lead-model",
    "    tools: [ledgerApproval]",
    "    agents: [helper]",
    "  helper:",
    "    instructions: You help.",
    "    description: Helps.",
    "    model: helper-model",
    "    tools: [ledgerApproval]",
    "  support:",
    "    instructions: You help customers.",
    "    description: Answers general questions.",
    "    model: support-model",
    "    tools: []",
    "    handoffs: [billing]",
    "  billing:",
    "    instructions: You handle invoices.",
    "    description: Handles invoices.",
    "    model: billing-model",
    "    tools: []",
  ]);
}

/** A deployment whose only agent is `solo`: its coordinator's prefix is its own. */
function soloFile(): string {
  return writeAgentsYaml([
    "agents:",
    "  solo:",
    "    instructions: You are alone.",
    "    model: solo-model",
    "    tools: []",
  ]);
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  env: { YIEM_AGENTS: agentsFile() },
});

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read", "approve"] });
const supportOnly = makeKey("support-only", { scopes: ["submit", "read"], agents: ["support"] });
let gateway: GatewayProcess;

beforeAll(async () => {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-tree-faces-")), "keys.jsonl");
  await writeKeysFile(file, [alice, bob, supportOnly]);
  gateway = await startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: file });
}, 90_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
});

const call = (key: TestKey, method: string, path: string, body?: unknown) =>
  callGateway(gateway.url, key.secret, method, path, body === undefined ? {} : { body });

/** Polls `read` every 200 ms until `done` holds of its value (20 s at most). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (const end = Date.now() + 20_000; ; ) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The calls awaiting a decision in `sessionId`'s tree, as `key` lists them, once there is one. */
async function waitingIn(key: TestKey, sessionId: string) {
  const listed = await until(
    () => call(key, "GET", `/v1/approvals?sessionId=${sessionId}`),
    (answer) => (answer.body?.approvals ?? []).length > 0,
  );
  expect(listed.status).toBe(200);
  return listed.body.approvals as Array<{ sessionId: string; callKey: string; chain?: unknown[] }>;
}

/** The run's answer text once it completed. */
async function answerOf(key: TestKey, runId: string): Promise<string> {
  const status = await until(
    () => call(key, "GET", `/v1/runs/${runId}`),
    (answer) => answer.body?.status === "completed" || answer.body?.status === "failed",
  );
  expect(status.body.status).toBe("completed");
  return textOf(status.body.result.response.content);
}

describe("calls waiting in a child run, through the gateway's REST routes (finding 5)", () => {
  it("are listed and decided by the root's owner (naming the root or the child session), and are 404 to another key", async () => {
    const started = await call(alice, "POST", "/v1/runs", { agent: "lead", input: "delegate r1" });
    expect(started.status).toBe(202);
    const root = started.body.sessionId as string;
    const [waiting] = await waitingIn(alice, root);
    const child = waiting?.sessionId ?? "";
    expect(child).not.toBe(root);
    expect(waiting?.chain).toHaveLength(2);
    const everywhere = await call(alice, "GET", "/v1/approvals");
    expect(everywhere.body.approvals.map((a: { sessionId: string }) => a.sessionId)).toContain(
      child,
    );
    const childSession = await call(alice, "GET", `/v1/sessions/${child}`);
    expect(childSession.status).toBe(200);
    expect(childSession.body.owner).toBe("alice");

    // Another key: nothing of the tree, whichever session it names.
    for (const sessionId of [root, child]) {
      expect((await call(bob, "GET", `/v1/approvals?sessionId=${sessionId}`)).status).toBe(404);
      expect((await call(bob, "GET", `/v1/sessions/${sessionId}`)).status).toBe(404);
      expect((await call(bob, "POST", `/v1/sessions/${sessionId}/abort`)).status).toBe(404);
      const decided = await call(bob, "POST", "/v1/approvals", {
        sessionId,
        toolCallId: waiting?.callKey,
        approved: true,
      });
      expect(decided.status).toBe(404);
    }
    const theirs = await call(bob, "GET", "/v1/approvals");
    expect(theirs.body.approvals.map((a: { sessionId: string }) => a.sessionId)).not.toContain(
      child,
    );
    const events = await fetch(`${gateway.url}/v1/sessions/${child}/events`, {
      headers: { authorization: `Bearer ${bob.secret}` },
    });
    expect(events.status).toBe(404);

    // The owner approves naming the root: the decision goes to the child's session.
    const approved = await call(alice, "POST", "/v1/approvals", {
      sessionId: root,
      toolCallId: waiting?.callKey,
      approved: true,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ sessionId: child, approved: true, by: "alice" });
    expect(await answerOf(alice, started.body.runId)).toBe("lead: helper: r1 recorded");

    // And denies naming the child session, as the list gives it.
    const again = await call(alice, "POST", "/v1/runs", {
      agent: "lead",
      sessionId: root,
      input: "delegate r2",
    });
    const [second] = await waitingIn(alice, root);
    const denied = await call(alice, "POST", "/v1/approvals", {
      sessionId: second?.sessionId,
      toolCallId: second?.callKey,
      approved: false,
      reason: "not r2",
    });
    expect(denied.status).toBe(200);
    expect(await answerOf(alice, again.body.runId)).toContain("denied by alice: not r2");
  });
});

/** A user message as `useChat` makes one. */
function userMessage(text: string): UIMessage {
  return {
    id: `m-${Math.random().toString(36).slice(2)}`,
    role: "user",
    parts: [{ type: "text", text }],
  };
}

/** Sends `messages` as `useChat` does and reads the answer with the AI SDK's reader (20 s at most). */
async function chat(key: TestKey, chatId: string, messages: UIMessage[], from?: UIMessage) {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${gateway.url}/v1/chat`,
    headers: { Authorization: `Bearer ${key.secret}` },
    body: { agent: "lead" },
  });
  const stream = await transport.sendMessages({
    trigger: "submit-message",
    chatId,
    messageId: undefined,
    messages,
    abortSignal: AbortSignal.timeout(20_000),
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({
    stream,
    terminateOnError: true,
    ...(from ? { message: from } : {}),
  })) {
    last = structuredClone(message);
  }
  if (!last) throw new Error("the chat answered no message");
  return last;
}

type ToolPart = { type: string; state: string; toolCallId: string; approval?: { id: string } };

function ledgerPart(message: UIMessage): ToolPart | undefined {
  return message.parts.find((part) => part.type === "tool-ledgerApproval") as ToolPart | undefined;
}

/** The answer as `addToolApprovalResponse` leaves it. */
function respondTo(message: UIMessage, approved: boolean): UIMessage {
  const responded = structuredClone(message);
  for (const part of responded.parts as ToolPart[]) {
    if (part.type === "tool-ledgerApproval" && part.approval) {
      Object.assign(part, {
        state: "approval-responded",
        approval: { ...part.approval, approved },
      });
    }
  }
  return responded;
}

function textParts(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

describe("calls waiting in a child run, through the AI SDK face (findings 5 and 7)", () => {
  it("ends the answer with the child's approval request, and decides it from the approval response", async () => {
    const chatId = `tree-chat-${Date.now()}`;
    const question = userMessage("delegate u1");
    const parked = await chat(alice, chatId, [question]);
    const part = ledgerPart(parked);
    expect(part?.state).toBe("approval-requested");
    expect(part?.approval?.id).toMatch(/^helper-.+\/c-u1$/);
    expect(parked.metadata).toMatchObject({ awaitingApproval: true });

    const stolen = await callGateway(gateway.url, bob.secret, "POST", "/v1/chat", {
      body: { id: chatId, messages: [question, respondTo(parked, true)] },
    });
    expect(stolen.status).toBe(404);

    const responded = respondTo(parked, true);
    const resumed = await chat(alice, chatId, [question, responded], responded);
    expect(ledgerPart(resumed)?.state).toBe("output-available");
    expect(textParts(resumed)).toBe("lead: helper: u1 recorded");

    const next = userMessage("delegate u2");
    const parkedAgain = await chat(alice, chatId, [question, resumed, next]);
    const denial = respondTo(parkedAgain, false);
    const denied = await chat(alice, chatId, [question, resumed, next, denial], denial);
    expect(ledgerPart(denied)?.state).toBe("output-denied");
    expect(textParts(denied)).toContain("denied by alice");
  });
});

describe("a run that waits for approval, through the OpenAI-compatible face (finding 7)", () => {
  const openai = (key: TestKey) => openaiClient(gateway.url, key.secret, 20_000);

  it("answers a finished completion naming the calls that wait, a child run's or the root's own", async () => {
    const { data, response } = await openai(alice)
      .chat.completions.create({
        model: "lead",
        messages: [{ role: "user", content: "delegate o1" }],
      })
      .withResponse();
    const extension = (data as unknown as { yiem: Record<string, unknown> }).yiem;
    const [waiting] = extension.approvals as Array<{ sessionId: string; toolCallId: string }>;
    const root = response.headers.get("x-yiem-session") ?? "";
    expect(extension).toMatchObject({ status: "awaiting_approval", sessionId: root });
    expect(waiting?.sessionId).not.toBe(root);
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.choices[0]?.message.content).toContain("[awaiting approval]");
    expect(data.choices[0]?.message.content).toContain(waiting?.toolCallId);
    const decided = await call(alice, "POST", "/v1/approvals", {
      sessionId: waiting?.sessionId,
      toolCallId: waiting?.toolCallId,
      approved: true,
    });
    expect(decided.status).toBe(200);
    const runId = response.headers.get("x-yiem-run") ?? "";
    expect(await answerOf(alice, runId)).toBe("lead: helper: o1 recorded");

    const direct = await openai(alice).chat.completions.create({
      model: "lead",
      messages: [{ role: "user", content: "direct o2" }],
    });
    const own = (
      direct as unknown as { yiem: { approvals: Array<{ sessionId: string; toolCallId: string }> } }
    ).yiem.approvals;
    expect(own.map((a) => a.toolCallId)).toEqual(["root-o2"]);
    await call(alice, "POST", "/v1/approvals", {
      sessionId: own[0]?.sessionId,
      toolCallId: "root-o2",
      approved: false,
    });
  });

  it("ends a stream with a last chunk naming the calls that wait", async () => {
    const stream = await openai(alice).chat.completions.create({
      model: "lead",
      messages: [{ role: "user", content: "delegate o3" }],
      stream: true,
    });
    let text = "";
    let last: Record<string, unknown> | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) last = chunk as unknown as Record<string, unknown>;
    }
    expect(text).toContain("[awaiting approval]");
    const extension = last?.yiem as { approvals: Array<{ sessionId: string; toolCallId: string }> };
    const choices = (last?.choices ?? []) as Array<{ finish_reason: string }>;
    expect(choices[0]?.finish_reason).toBe("stop");
    const [waiting] = extension.approvals;
    expect(waiting?.toolCallId).toBe("c-o3");
    const denied = await call(alice, "POST", "/v1/approvals", {
      sessionId: waiting?.sessionId,
      toolCallId: waiting?.toolCallId,
      approved: false,
    });
    expect(denied.status).toBe(200);
  });
});

describe("the session's agent answers (finding 6, issue 30)", () => {
  it("answers a follow-up naming no agent, or naming the old one on a chat face, with the agent the session was handed off to", async () => {
    const first = await call(alice, "POST", "/v1/runs?wait=true", {
      agent: "support",
      input: "transfer please",
    });
    expect(first.status).toBe(200);
    const sessionId = first.body.sessionId as string;
    const next = await call(alice, "POST", "/v1/runs?wait=true", { sessionId, input: "more" });
    expect(next.status).toBe(200);
    expect(textOf(next.body.response.content)).toBe("billing: more");

    const completion = await openaiClient(gateway.url, alice.secret).chat.completions.create(
      { model: "support", messages: [{ role: "user", content: "and more" }] },
      { headers: { "X-Yiem-Session": sessionId } },
    );
    expect(completion.model).toBe("billing");
    expect(completion.choices[0]?.message.content).toBe("billing: and more");
  });

  it("checks a key's agents against the agent the session is with now: a handoff out of its scope makes the next request 403, saying so", async () => {
    const first = await call(supportOnly, "POST", "/v1/runs?wait=true", {
      agent: "support",
      input: "transfer please",
    });
    expect(first.status).toBe(200);
    const sessionId = first.body.sessionId as string;
    for (const body of [
      { sessionId, input: "more" },
      { sessionId, agent: "support", input: "more" },
    ]) {
      const refused = await call(supportOnly, "POST", "/v1/runs", body);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('"billing"');
      expect(refused.body.error.message).toContain("handoff");
    }
  });

  it("refuses a new session naming no agent where no agent is the default, and gives it to the only agent where there is one", async () => {
    const gatewayRefusal = await call(alice, "POST", "/v1/runs", { input: "hi" });
    expect(gatewayRefusal.status).toBe(400);
    expect(gatewayRefusal.body.error.field).toBe("agent");

    const sent = await cluster.client.send("hi");
    const reason = await until(
      () => cluster.client.requestRefusal(sent.requestId),
      (value) => value !== undefined,
    );
    expect(reason).toContain("a new session needs an agent");

    const prefix = `${cluster.redis.prefix}-solo`;
    await cluster.addCoordinatorWith({ YIEM_PREFIX: prefix, YIEM_AGENTS: soloFile() });
    const solo = new YiemClient({ redis: cluster.redisTarget, prefix });
    try {
      const { requestId, sessionId } = await solo.send("hi");
      const answer = await solo.waitForAnswer(requestId, { timeoutMs: 20_000 });
      expect(textOf(answer.response.content)).toBe("solo: hi");
      expect(await solo.sessionAgent(sessionId)).toBe("solo");
    } finally {
      await solo.close();
    }
  });
});

describe("a call waiting in a child run, through the Open Responses face", () => {
  it("is the owner's mcp_approval_request; decided, the same response completes; another key gets 404", async () => {
    const openai = (key: TestKey) => openaiClient(gateway.url, key.secret, 20_000);
    const parked = await openai(alice).responses.create({ model: "lead", input: "delegate r1" });
    expect(parked.status).toBe("incomplete");
    expect(parked.incomplete_details?.reason).toBe("awaiting_approval");
    const yiem = (
      parked as unknown as {
        yiem: { sessionId: string; approvals: Array<{ sessionId: string; toolCallId: string }> };
      }
    ).yiem;
    const [waiting] = yiem.approvals;
    expect(waiting?.toolCallId).toBe("c-r1");
    expect(waiting?.sessionId).not.toBe(yiem.sessionId); // the child run's session
    const [request] = parked.output.filter((item) => item.type === "mcp_approval_request");
    expect(request).toMatchObject({
      id: `${waiting?.sessionId}/c-r1`,
      name: "ledgerApproval",
      server_label: "yiem",
    });
    // Another key sees neither the response nor the child's call.
    await expect(openai(bob).responses.retrieve(parked.id)).rejects.toMatchObject({ status: 404 });
    const refused = await call(bob, "POST", "/v1/approvals", {
      sessionId: waiting?.sessionId,
      toolCallId: "c-r1",
      approved: true,
    });
    expect(refused.status).toBe(404);
    const decided = await call(alice, "POST", "/v1/approvals", {
      sessionId: waiting?.sessionId,
      toolCallId: "c-r1",
      approved: true,
    });
    expect(decided.status).toBe(200);
    const done = await until(
      () => openai(alice).responses.retrieve(parked.id),
      (response) => response.status === "completed" || response.status === "failed",
    );
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("lead: helper: r1 recorded");
  });
});
