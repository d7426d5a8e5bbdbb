import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { beforeAll, describe, expect, it } from "vitest";
import {
  collect,
  data,
  dataOf,
  keyedFetch,
  lastStatus,
  statesOf,
  statusText,
  taskIdOf,
  text,
  userMessage,
} from "./a2aSupport.js";
import { useFaceCluster } from "./faceCluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  runGatewayExample,
  startGatewayProcess,
  type TestKey,
} from "./support.js";

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read"] });
const carol = makeKey("carol", { scopes: ["submit", "read", "approve"] });
const faces = useFaceCluster([alice, bob, carol]);
const { cluster } = faces;
let gatewayEnv: Record<string, string>;
let gateway: GatewayProcess;
let otherGateway: GatewayProcess;

beforeAll(() => {
  ({ gateway, otherGateway, gatewayEnv } = faces);
});

/** An A2A client of `key`, made from the agent card the gateway `on` serves at `base`. */
async function a2aClient(key: TestKey, on = gateway, base = ""): Promise<Client> {
  const fetchImpl = keyedFetch(key);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(`${on.url}${base}`);
}

/**
 * An A2A client of `key` speaking v0.3 (`message/send`, `tasks/get`…: the SDK's legacy
 * JSON-RPC transport), made from the card's v0.3 interface.
 */
async function legacyClient(key: TestKey): Promise<Client> {
  const fetchImpl = keyedFetch(key);
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(gateway.url);
  const legacy = card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3");
  expect(legacy).toHaveLength(1);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
  });
  return factory.createFromAgentCard({ ...card, supportedInterfaces: legacy });
}

describe("the A2A face", () => {
  it("serves each agent's card to a key, declaring bearer auth, streaming and skills from its tools", async () => {
    const resolver = new DefaultAgentCardResolver({ fetchImpl: keyedFetch(alice) });
    const card = await resolver.resolve(gateway.url);
    expect(card.supportedInterfaces[0]).toMatchObject({
      url: `${gateway.url}/v1/a2a`,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    });
    expect(card.capabilities?.streaming).toBe(true);
    const scheme = Object.values(card.securitySchemes)[0]?.scheme;
    expect(scheme).toMatchObject({ $case: "httpAuthSecurityScheme", value: { scheme: "bearer" } });
    expect(card.skills.map((s) => s.name)).toEqual(expect.arrayContaining([card.name, "sleepFor"]));
    const own = await resolver.resolve(`${gateway.url}/v1/a2a/${card.name}/`);
    expect(own.supportedInterfaces[0]?.url).toBe(`${gateway.url}/v1/a2a/${card.name}`);
    const anonymous = await fetch(`${gateway.url}/.well-known/agent-card.json`);
    expect(anonymous.status).toBe(401);
    const missing = await callGateway(
      gateway.url,
      alice.secret,
      "GET",
      "/v1/a2a/no-such-agent/.well-known/agent-card.json",
    );
    expect(missing.status).toBe(404);
    const doc = await callGateway(gateway.url, undefined, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/v1/a2a"].post["x-scope"]).toBe("read");
    expect(doc.body.paths["/.well-known/agent-card.json"].get).toBeDefined();
  }, 60_000);

  it("streams a task with two parallel tool calls: calls in order, both results, the answer in chunks, its usage", async () => {
    const client = await a2aClient(alice);
    const events = await collect(client.sendMessageStream(userMessage([text("pair x")])));
    expect(events[0]?.payload?.$case).toBe("task");
    const calls = events.flatMap(dataOf).flatMap((d) => (d.toolCall ? [d.toolCall] : []));
    expect(calls.map((c) => (c as { id: string }).id)).toEqual(["first", "second"]);
    const results = events.flatMap(dataOf).flatMap((d) => (d.toolResult ? [d.toolResult] : []));
    expect(results.map((r) => (r as { id: string }).id).sort()).toEqual(["first", "second"]);
    const chunks = events.filter((e) => e.payload?.$case === "artifactUpdate");
    expect(chunks.length).toBeGreaterThan(1);
    const end = lastStatus(events);
    expect(end?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(end ?? {})).toMatch(/^done: /);
    expect(end?.metadata?.usage?.modelCalls).toBe(2);
    const task = await client.getTask({ tenant: "", id: taskIdOf(events) });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.contextId).toBe(end?.contextId);
    const answer = task.artifacts.at(-1)?.parts[0]?.content;
    expect(answer).toEqual({ $case: "text", value: statusText(task) });
  }, 60_000);

  it("says a call awaiting approval as input-required, and the next message on the task approves it and continues", async () => {
    const client = await a2aClient(alice);
    const sent = await client.sendMessage(userMessage([text("approve a1")]));
    const parked = sent as Task;
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const approvals = (parked.status?.message?.parts ?? []).flatMap((p) =>
      p.content?.$case === "data" ? (p.content.value.approvals ?? []) : [],
    );
    expect(approvals).toMatchObject([{ toolName: "ledgerApproval", toolCallId: "call-a1" }]);
    // A key without the approve scope cannot decide it.
    const bobs = await a2aClient(bob);
    const refused = bobs.sendMessage(
      userMessage([data({ approved: true })], { taskId: parked.id, contextId: parked.contextId }),
    );
    await expect(refused).rejects.toThrow();
    const ids = { taskId: parked.id, contextId: parked.contextId };
    const events = await collect(
      client.sendMessageStream(userMessage([data({ approved: true, callId: "call-a1" })], ids)),
    );
    // The stream goes on from the task as it stands (which the call may have finished already).
    expect(events[0]?.payload?.$case).toBe("task");
    expect(statesOf(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const again = await client.getTask({ tenant: "", id: parked.id });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(again)).toMatch(/^done: /);
    const said = again.history.flatMap((m) =>
      m.parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : [])),
    );
    expect(said).toMatchObject([
      { toolCall: { id: "call-a1", name: "ledgerApproval" } },
      { decision: { toolCallId: "call-a1", approved: true, by: "alice" } },
      { toolResult: { id: "call-a1", content: "a1 recorded" } },
    ]);
  }, 60_000);

  it('denies a waiting call with the text "deny", and refuses a message on a task that waits for nothing', async () => {
    const client = await a2aClient(alice);
    const parked = (await client.sendMessage(userMessage([text("approve d1")]))) as Task;
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const ids = { taskId: parked.id, contextId: parked.contextId };
    const denied = (await client.sendMessage(userMessage([text("deny")], ids))) as Task;
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const said = denied.history.flatMap((m) =>
      m.parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : [])),
    );
    expect(said).toContainEqual({
      decision: expect.objectContaining({ toolCallId: "call-d1", approved: false, by: "alice" }),
    });
    const ran = said.filter((d) => d.toolResult);
    expect(ran).toMatchObject([
      { toolResult: { id: "call-d1", content: expect.not.stringContaining("recorded") } },
    ]);
    await expect(client.sendMessage(userMessage([text("approve")], ids))).rejects.toMatchObject({
      name: "UnsupportedOperationError",
    });
  }, 60_000);

  it("answers A2A v0.3's methods too (message/stream, message/send, tasks/get), approval included", async () => {
    const client = await legacyClient(alice);
    expect(client.protocolVersion).toBe("0.3");
    const events = await collect(client.sendMessageStream(userMessage([text("approve l1")])));
    expect(statesOf(events).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const parked = lastStatus(events);
    const ids = { taskId: parked?.taskId ?? "", contextId: parked?.contextId ?? "" };
    const continued = (await client.sendMessage(
      userMessage([data({ approved: true })], ids),
    )) as Task;
    expect(continued.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(continued)).toBe("done: l1 recorded");
    const task = await client.getTask({ tenant: "", id: ids.taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  }, 60_000);

  it("resubscribes to the task on another gateway after the first is SIGKILLed mid-stream, running it once", async () => {
    const doomed = await startGatewayProcess(gatewayEnv);
    const client = await a2aClient(alice, doomed);
    const seen: StreamResponse[] = [];
    const stream = client.sendMessageStream(userMessage([text("slow s1")]));
    const cut = (async () => {
      try {
        for await (const event of stream) {
          seen.push(event);
          if (dataOf(event).some((d) => d.toolCall)) doomed.process.signal("SIGKILL");
        }
      } catch {
        // the stream is cut
      }
    })();
    await cut;
    const taskId = taskIdOf(seen);
    expect(lastStatus(seen)?.status?.state).not.toBe(TaskState.TASK_STATE_COMPLETED);
    const other = await a2aClient(alice, otherGateway);
    const events = await collect(other.resubscribeTask({ tenant: "", id: taskId }));
    expect(events[0]?.payload?.$case).toBe("task");
    expect(statesOf(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(lastStatus(events) ?? {})).toMatch(/^done: /);
    const contextId = lastStatus(events)?.contextId ?? "";
    const users = (await cluster.client.messages(contextId)).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
  }, 90_000);

  it("leaves the task going when its stream is closed, and cancels it from another gateway (the durable abort)", async () => {
    const client = await a2aClient(alice);
    let taskId = "";
    for await (const event of client.sendMessageStream(userMessage([text("hold h1")]))) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (dataOf(event).some((d) => d.toolCall)) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const going = await client.getTask({ tenant: "", id: taskId });
    expect(going.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const other = await a2aClient(alice, otherGateway);
    const cancelled = await other.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(
      other.cancelTask({ tenant: "", id: taskId, metadata: undefined }),
    ).rejects.toMatchObject({ name: "TaskNotCancelableError" });
  }, 60_000);

  it("keeps a task its key's own: another key gets TaskNotFoundError for it, its resubscribe, its decision and its cancel", async () => {
    const client = await a2aClient(alice);
    const parked = (await client.sendMessage(userMessage([text("approve o1")]))) as Task;
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const carols = await a2aClient(carol, otherGateway);
    const notFound = { name: "TaskNotFoundError" };
    await expect(carols.getTask({ tenant: "", id: parked.id })).rejects.toMatchObject(notFound);
    await expect(
      carols.cancelTask({ tenant: "", id: parked.id, metadata: undefined }),
    ).rejects.toMatchObject(notFound);
    const resubscribe = carols.resubscribeTask({ tenant: "", id: parked.id });
    await expect(resubscribe.next()).rejects.toMatchObject(notFound);
    const ids = { taskId: parked.id, contextId: parked.contextId };
    await expect(
      carols.sendMessage(userMessage([data({ approved: true })], ids)),
    ).rejects.toMatchObject(notFound);
    await expect(
      carols.sendMessage(userMessage([text("hello")], { contextId: parked.contextId })),
    ).rejects.toMatchObject(notFound);
    // Without a key, the refusal is a JSON-RPC error too, its HTTP status kept.
    const anonymous = await callGateway(gateway.url, undefined, "POST", "/v1/a2a", {
      body: { jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: parked.id } },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ jsonrpc: "2.0", error: { data: { status: 401 } } });
    expect(await cluster.client.pendingApprovals(parked.contextId)).toHaveLength(1);
    await cluster.client.abort(parked.contextId);
  }, 60_000);
});

describe("docs/GATEWAY.md", () => {
  it("runs the A2A example as written, with node and @a2a-js/sdk", async () => {
    const lines = await runGatewayExample("a2aFace.test.ts", "a2a.mjs", gateway.url, alice.secret);
    expect(lines).toEqual(["calling echoText", "TASK_STATE_COMPLETED: done: noon in Lima", ""]);
  }, 90_000);
});
