/**
 * A2A push notifications on the gateway, driven by @a2a-js/sdk's client against real gateway
 * processes, with loopback webhook receivers: the configs (set, get, list, delete) kept with
 * the task; each state POSTed with the config's token, then the final task; delivery going on
 * after the gateway that took the config is SIGKILLed; and the SSRF attacks a webhook URL is
 * (a host not allowed, a cloud metadata address, a redirect to another host) refused.
 */

import { createServer } from "node:net";
import { type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, keyedFetch, text, userMessage } from "./a2aSupport.js";
import { useFaceCluster } from "./faceCluster.js";
import {
  type GatewayProcess,
  makeKey,
  runGatewayExample,
  startGatewayProcess,
  type TestKey,
} from "./support.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhookReceiver.js";

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const carol = makeKey("carol", { scopes: ["submit", "read", "approve"] });
const faces = useFaceCluster([alice, carol]);
let hook: WebhookReceiver;
let forbidden: WebhookReceiver;
let redirector: WebhookReceiver;
let pushGateway: GatewayProcess;
let otherPushGateway: GatewayProcess;
let pushEnv: Record<string, string>;
/** The port docs/GATEWAY.md's push example listens on (allowed, free when picked). */
let examplePort = 0;

/** A TCP port free on 127.0.0.1 now. */
async function pickFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 0;
}

beforeAll(async () => {
  hook = await startWebhookReceiver();
  forbidden = await startWebhookReceiver();
  redirector = await startWebhookReceiver({
    status: 307,
    headers: { location: `${forbidden.url}/stolen` },
  });
  // The hook and the redirector are allowed; the forbidden receiver (an "internal service") is not.
  examplePort = await pickFreePort();
  const hosts = `127.0.0.1:${hook.port},127.0.0.1:${redirector.port},127.0.0.1:${examplePort}`;
  pushEnv = { ...faces.gatewayEnv, YIEM_A2A_PUSH_HOSTS: hosts };
  [pushGateway, otherPushGateway] = await Promise.all([
    startGatewayProcess(pushEnv),
    startGatewayProcess(pushEnv),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([pushGateway?.process.stop(3000), otherPushGateway?.process.stop(3000)]);
  await Promise.all([hook?.close(), forbidden?.close(), redirector?.close()]);
});

/** An A2A client of `key` (JSON-RPC, or HTTP+JSON with `rest`) from the card of `on`. */
async function pushClient(key: TestKey, on: GatewayProcess, rest = false): Promise<Client> {
  const fetchImpl = keyedFetch(key);
  const transport = rest
    ? new RestTransportFactory({ fetchImpl })
    : new JsonRpcTransportFactory({ fetchImpl });
  const factory = new ClientFactory({
    transports: [transport],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(on.url);
}

/** A push config of `taskId` to `url` with `token`, as the SDK's request takes it. */
function pushConfig(taskId: string, url: string, token = "", id = "") {
  return { tenant: "", id, taskId, url, token, authentication: undefined };
}

/** Starts a task that parks for approval of `call-<label>` (the client's answer: input required). */
async function parkedTask(client: Client, label: string): Promise<Task> {
  const task = (await client.sendMessage(userMessage([text(`approve ${label}`)]))) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

/** Approves the parked task's calls with a message on it. */
async function approve(client: Client, task: Task): Promise<void> {
  const ids = { taskId: task.id, contextId: task.contextId };
  await client.sendMessage(userMessage([data({ approved: true })], ids));
}

/** The states a receiver was told of for `taskId` (status updates, then `task` for the final task). */
function toldOf(receiver: WebhookReceiver, taskId: string): string[] {
  return receiver.received.flatMap(({ body }) => {
    const update = body.statusUpdate as
      | { taskId?: string; status?: { state?: string } }
      | undefined;
    if (update?.taskId === taskId) return [update.status?.state ?? "?"];
    const task = body.task as { id?: string; status?: { state?: string } } | undefined;
    if (task?.id === taskId) return [`task:${task.status?.state}`];
    return [];
  });
}

/** Resolves once `check` holds (every 100 ms, `ms` at most). */
async function waitFor(check: () => boolean, ms = 40_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("timed out waiting");
}

describe("A2A push notifications", () => {
  it("advertises push, and keeps a task's configs (set, get, list, delete) in Redis: any gateway, the key's own", async () => {
    const client = await pushClient(alice, pushGateway);
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const task = await parkedTask(client, "c1");
    const set = await client.createTaskPushNotificationConfig(
      pushConfig(task.id, `${hook.url}/c1`, "tok-c1", "cfg-1"),
    );
    expect(set).toMatchObject({ id: "cfg-1", taskId: task.id, url: `${hook.url}/c1` });
    const other = await pushClient(alice, otherPushGateway, true);
    const got = await other.getTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      id: "cfg-1",
    });
    expect(got.url).toBe(`${hook.url}/c1`);
    const listed = await other.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs.map((c) => c.id)).toEqual(["cfg-1"]);
    const carols = await pushClient(carol, otherPushGateway);
    await expect(
      carols.createTaskPushNotificationConfig(pushConfig(task.id, `${hook.url}/steal`)),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
    await expect(
      carols.listTaskPushNotificationConfig({
        tenant: "",
        taskId: task.id,
        pageSize: 0,
        pageToken: "",
      }),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
    await other.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "cfg-1" });
    const after = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(after.configs).toEqual([]);
    await approve(client, task);
  }, 60_000);

  it("answers v0.3's method names (tasks/pushNotificationConfig/set, get, list, delete) in v0.3's shapes", async () => {
    const client = await pushClient(alice, pushGateway);
    const task = await parkedTask(client, "v1");
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const response = await fetch(`${otherPushGateway.url}/v1/a2a`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: method, method, params }),
      });
      return (await response.json()) as { result?: unknown; error?: unknown };
    };
    const config = { id: "old-1", url: `${hook.url}/v1`, token: "tok-v1" };
    const set = await rpc("tasks/pushNotificationConfig/set", {
      taskId: task.id,
      pushNotificationConfig: config,
    });
    expect(set.result).toEqual({ taskId: task.id, pushNotificationConfig: config });
    const got = await rpc("tasks/pushNotificationConfig/get", {
      id: task.id,
      pushNotificationConfigId: "old-1",
    });
    expect(got.result).toEqual(set.result);
    const listed = await rpc("tasks/pushNotificationConfig/list", { id: task.id });
    expect(listed.result).toEqual([set.result]);
    const deleted = await rpc("tasks/pushNotificationConfig/delete", {
      id: task.id,
      pushNotificationConfigId: "old-1",
    });
    expect(deleted).toMatchObject({ result: null });
    expect((await rpc("tasks/pushNotificationConfig/list", { id: task.id })).result).toEqual([]);
    await approve(client, task);
  }, 60_000);

  it("POSTs each state of the task to the webhook with the config's token, then the final task", async () => {
    const client = await pushClient(alice, pushGateway);
    const task = await parkedTask(client, "p1");
    await client.createTaskPushNotificationConfig(pushConfig(task.id, `${hook.url}/p1`, "tok-p1"));
    await waitFor(() => toldOf(hook, task.id).length > 0);
    expect(toldOf(hook, task.id)[0]).toBe("TASK_STATE_INPUT_REQUIRED");
    await approve(client, task);
    await waitFor(() => toldOf(hook, task.id).includes("task:TASK_STATE_COMPLETED"));
    const told = toldOf(hook, task.id);
    expect(told.at(-2)).toBe("TASK_STATE_COMPLETED");
    expect(told.at(-1)).toBe("task:TASK_STATE_COMPLETED");
    const mine = hook.received.filter((r) => JSON.stringify(r.body).includes(task.id));
    for (const request of mine) {
      expect(request.method).toBe("POST");
      expect(request.headers["x-a2a-notification-token"]).toBe("tok-p1");
      expect(request.headers["content-type"]).toContain("application/a2a+json");
    }
  }, 60_000);

  it("delivers after the gateway that took the config is SIGKILLed: another gateway takes the delivery on", async () => {
    const doomed = await startGatewayProcess(pushEnv);
    const client = await pushClient(alice, doomed);
    const task = await parkedTask(client, "k1");
    await client.createTaskPushNotificationConfig(pushConfig(task.id, `${hook.url}/k1`, "tok-k1"));
    doomed.process.signal("SIGKILL");
    const survivor = await pushClient(alice, otherPushGateway);
    await approve(survivor, task);
    await waitFor(() => toldOf(hook, task.id).includes("task:TASK_STATE_COMPLETED"));
    expect(toldOf(hook, task.id)).toContain("TASK_STATE_COMPLETED");
    await doomed.process.stop(3000);
  }, 90_000);

  it("refuses a webhook on a host not allowed (a cloud metadata address, another port, push off) and never follows a redirect", async () => {
    const client = await pushClient(alice, pushGateway);
    const task = await parkedTask(client, "s1");
    for (const url of [
      "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
      `http://2130706433:${forbidden.port}/`, // 127.0.0.1 in disguise, on a port not allowed
      `http://user:pw@127.0.0.1:${hook.port}/`,
      `file:///etc/passwd`,
    ]) {
      await expect(
        client.createTaskPushNotificationConfig(pushConfig(task.id, url)),
      ).rejects.toThrow(/not allowed|user or password|not http/);
    }
    const none = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(none.configs).toEqual([]);
    // A gateway without YIEM_A2A_PUSH_HOSTS says push is off (its card too).
    const off = await pushClient(alice, faces.gateway);
    expect((await off.getAgentCard()).capabilities?.pushNotifications).toBe(false);
    const refused = await fetch(`${faces.gateway.url}/v1/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.secret}`, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "CreateTaskPushNotificationConfig",
        params: { taskId: task.id, url: `${hook.url}/off` },
      }),
    });
    expect(JSON.stringify(await refused.json())).toContain("push notifications are off");
    // An allowed host that redirects elsewhere: the notification is not sent on.
    await client.createTaskPushNotificationConfig(
      pushConfig(task.id, `${redirector.url}/r`, "tok-r"),
    );
    await approve(client, task);
    await waitFor(() => redirector.received.some((r) => JSON.stringify(r.body).includes(task.id)));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(forbidden.received).toEqual([]);
  }, 60_000);
});

describe("docs/GATEWAY.md", () => {
  it("runs the A2A push example as written, with node and @a2a-js/sdk", async () => {
    process.env.WEBHOOK_PORT = String(examplePort);
    try {
      const lines = await runGatewayExample(
        "a2aPush.test.ts",
        "a2a-push.mjs",
        pushGateway.url,
        alice.secret,
      );
      expect(lines).toEqual(["final: TASK_STATE_COMPLETED", ""]);
    } finally {
      delete process.env.WEBHOOK_PORT;
    }
  }, 90_000);
});
