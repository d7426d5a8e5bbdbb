/**
 * The A2A face's HTTP+JSON binding, driven by @a2a-js/sdk's own REST transport
 * (`RestTransportFactory`) against two real gateway processes on a real cluster: the card's
 * HTTP+JSON interface, a streamed task read on the other gateway, approval, the durable
 * cancel, a resubscribe after a SIGKILL, and ownership (another key's task not found).
 */
import { type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  RestTransportFactory,
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

/**
 * An A2A client of `key` speaking HTTP+JSON only, made from the card the gateway `on` serves
 * at `base`; `paths` lists the paths it requested.
 */
async function restClient(key: TestKey, on = gateway, base = "") {
  const paths: string[] = [];
  const keyed = keyedFetch(key);
  const fetchImpl: typeof fetch = (input, init) => {
    paths.push(new URL(String(input instanceof Request ? input.url : input)).pathname);
    return keyed(input, init);
  };
  const factory = new ClientFactory({
    transports: [new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  const client: Client = await factory.createFromUrl(`${on.url}${base}`);
  return { client, paths };
}

describe("the A2A face's HTTP+JSON binding", () => {
  it("is on the card, and streams a task with two parallel tool calls, which the other gateway gets", async () => {
    const { client, paths } = await restClient(alice);
    const events = await collect(client.sendMessageStream(userMessage([text("pair r")])));
    expect(paths).toContain("/v1/a2a/rest/message:stream");
    expect(events[0]?.payload?.$case).toBe("task");
    const calls = events.flatMap(dataOf).flatMap((d) => (d.toolCall ? [d.toolCall] : []));
    expect(calls.map((c) => (c as { id: string }).id)).toEqual(["first", "second"]);
    const end = lastStatus(events);
    expect(end?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(end ?? {})).toMatch(/^done: /);
    const other = await restClient(alice, otherGateway);
    const task = await other.client.getTask({ tenant: "", id: taskIdOf(events) });
    expect(other.paths).toContain(`/v1/a2a/rest/tasks/${taskIdOf(events)}`);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(task)).toBe(statusText(end ?? {}));
    // One agent's card names its own HTTP+JSON interface.
    const agent = (await client.getAgentCard()).name;
    const own = await restClient(alice, gateway, `/v1/a2a/${agent}/`);
    const sent = (await own.client.sendMessage(userMessage([text("hello o")]))) as Task;
    expect(own.paths).toContain(`/v1/a2a/${agent}/rest/message:send`);
    expect(statusText(sent)).toBe("hi o");
  }, 60_000);

  it("says a call awaiting approval as input-required; a message on the task approves it (not by a key without approve)", async () => {
    const { client } = await restClient(alice);
    const parked = (await client.sendMessage(userMessage([text("approve a2")]))) as Task;
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const ids = { taskId: parked.id, contextId: parked.contextId };
    // A key without the approve scope cannot decide even its own task's call.
    const bobs = (await restClient(bob, otherGateway)).client;
    const own = (await bobs.sendMessage(userMessage([text("approve b2")]))) as Task;
    expect(own.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const owned = { taskId: own.id, contextId: own.contextId };
    await expect(bobs.sendMessage(userMessage([data({ approved: true })], owned))).rejects.toThrow(
      /approve/,
    );
    await cluster.client.abort(own.contextId);
    const other = await restClient(alice, otherGateway);
    const done = (await other.client.sendMessage(
      userMessage([data({ approved: true, callId: "call-a2" })], ids),
    )) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(done)).toBe("done: a2 recorded");
  }, 60_000);

  it("resubscribes on another gateway after the streaming one is SIGKILLed, and cancels durably from there", async () => {
    const doomed = await startGatewayProcess(gatewayEnv);
    const { client } = await restClient(alice, doomed);
    const seen = [];
    try {
      for await (const event of client.sendMessageStream(userMessage([text("slow r1")]))) {
        seen.push(event);
        if (dataOf(event).some((d) => d.toolCall)) doomed.process.signal("SIGKILL");
      }
    } catch {
      // the stream is cut
    }
    const other = await restClient(alice, otherGateway);
    const events = await collect(other.client.resubscribeTask({ tenant: "", id: taskIdOf(seen) }));
    expect(other.paths).toContain(`/v1/a2a/rest/tasks/${taskIdOf(seen)}:subscribe`);
    expect(statesOf(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const contextId = lastStatus(events)?.contextId ?? "";
    const users = (await cluster.client.messages(contextId)).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
    // A task held by a tool call is cancelled from the other gateway: the durable abort.
    let held = "";
    for await (const event of other.client.sendMessageStream(userMessage([text("hold r2")]))) {
      if (event.payload?.$case === "task") held = event.payload.value.id;
      if (dataOf(event).some((d) => d.toolCall)) break;
    }
    const cancelled = await other.client.cancelTask({ tenant: "", id: held, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(
      other.client.cancelTask({ tenant: "", id: held, metadata: undefined }),
    ).rejects.toMatchObject({ name: "TaskNotCancelableError" });
    await doomed.process.stop(3000);
  }, 90_000);

  it("keeps a task its key's own: another key gets TaskNotFoundError for it, its subscribe, its cancel and a message on it", async () => {
    const { client } = await restClient(alice);
    const parked = (await client.sendMessage(userMessage([text("approve o3")]))) as Task;
    const carols = (await restClient(carol, otherGateway)).client;
    const notFound = { name: "TaskNotFoundError" };
    await expect(carols.getTask({ tenant: "", id: parked.id })).rejects.toMatchObject(notFound);
    await expect(
      carols.cancelTask({ tenant: "", id: parked.id, metadata: undefined }),
    ).rejects.toMatchObject(notFound);
    await expect(
      carols.resubscribeTask({ tenant: "", id: parked.id }).next(),
    ).rejects.toMatchObject(notFound);
    const ids = { taskId: parked.id, contextId: parked.contextId };
    await expect(
      carols.sendMessage(userMessage([data({ approved: true })], ids)),
    ).rejects.toMatchObject(notFound);
    // Without a key: a 401 in the binding's error shape.
    const anonymous = await callGateway(
      gateway.url,
      undefined,
      "GET",
      `/v1/a2a/rest/tasks/${parked.id}`,
    );
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    expect(await cluster.client.pendingApprovals(parked.contextId)).toHaveLength(1);
    await cluster.client.abort(parked.contextId);
  }, 60_000);
});

describe("docs/GATEWAY.md", () => {
  it("runs the A2A HTTP+JSON example as written, with node and @a2a-js/sdk", async () => {
    const lines = await runGatewayExample(
      "a2aRest.test.ts",
      "a2a-rest.mjs",
      gateway.url,
      alice.secret,
    );
    expect(lines).toEqual(["TASK_STATE_COMPLETED: done: noon in Lima", ""]);
  }, 90_000);
});
