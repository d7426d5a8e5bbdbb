import { randomUUID } from "node:crypto";
import {
  type BaseEvent,
  HttpAgent,
  type Interrupt,
  type RunAgentInput,
  runHttpRequest,
  transformHttpEventStream,
} from "@ag-ui/client";
import { beforeAll, describe, expect, it } from "vitest";
import { runKeeping } from "./aguiRuns.js";
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

/** An AG-UI agent of `key` on `on`, on thread `threadId`, whose thread starts with `text`. */
function aguiAgent(
  key: TestKey,
  threadId: string,
  text: string,
  on = gateway,
  fetch?: (url: string, init: RequestInit) => Promise<Response>,
): HttpAgent {
  return new HttpAgent({
    url: `${on.url}/v1/agui`,
    headers: { authorization: `Bearer ${key.secret}` },
    threadId,
    initialMessages: [{ id: `user-${randomUUID()}`, role: "user", content: text }],
    ...(fetch ? { fetch } : {}),
  });
}

/**
 * An AG-UI agent whose `connect` (`connectAgent`) posts to the gateway's `/v1/agui/connect`:
 * `HttpAgent` of @ag-ui/client 1.0 leaves `connect` to be written (as docs/GATEWAY.md shows).
 */
class ConnectingAgent extends HttpAgent {
  protected override connect(input: RunAgentInput) {
    const url = `${this.url}/connect`;
    return transformHttpEventStream(runHttpRequest(() => this.fetch(url, this.requestInit(input))));
  }
}

/** A connecting AG-UI agent of `key` on `on`, for thread `threadId` (no messages of its own). */
function connectingAgent(key: TestKey, threadId: string, on: GatewayProcess): ConnectingAgent {
  return new ConnectingAgent({
    url: `${on.url}/v1/agui`,
    headers: { authorization: `Bearer ${key.secret}` },
    threadId,
  });
}

/** Connects `agent` (with `params`), keeping every event it received, in order. */
async function connectKeeping(
  agent: ConnectingAgent,
  params: Parameters<HttpAgent["connectAgent"]>[0] = {},
) {
  const events: BaseEvent[] = [];
  const interrupts: Interrupt[] = [];
  const outcome = await agent.connectAgent(params, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (finished) => {
      if (finished.outcome === "interrupt") interrupts.push(...finished.interrupts);
    },
  });
  return { ...outcome, events, interrupts, types: events.map((e) => e.type as string) };
}

/**
 * `fetch` whose answer's body ends (instead of failing) when its connection is cut: the AG-UI
 * client leaves the failed read of a body cut mid-stream unhandled, which is not what a
 * reconnect test looks at.
 */
async function fetchEndingWhenCut(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const reader = response.body?.getReader();
  if (!reader) return response;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

describe("the AG-UI face", () => {
  it("streams a run with two parallel tool calls to HttpAgent: calls in order, their results, the answer and its usage", async () => {
    const agent = aguiAgent(alice, randomUUID(), "pair x");
    const run = await runKeeping(agent);
    expect(run.types[0]).toBe("RUN_STARTED");
    expect(run.types.at(-1)).toBe("RUN_FINISHED");
    expect(run.result).toMatch(/^done: /);
    const calls = agent.messages.flatMap((m) =>
      m.role === "assistant" ? (m.toolCalls ?? []) : [],
    );
    expect(calls.map((c) => c.id)).toEqual(["first", "second"]);
    expect(calls.map((c) => JSON.parse(c.function.arguments).label)).toEqual(["first", "second"]);
    const results = agent.messages.filter((m) => m.role === "tool");
    expect(results.map((m) => (m as { toolCallId: string }).toolCallId).sort()).toEqual([
      "first",
      "second",
    ]);
    const answer = agent.messages.filter((m) => m.role === "assistant" && m.content).at(-1);
    expect(answer?.content).toBe(run.result);
    expect(run.types.filter((t) => t === "TEXT_MESSAGE_CONTENT").length).toBeGreaterThan(1);
    const usage = (agent.state as { usage?: { modelCalls?: number } }).usage;
    expect(usage?.modelCalls).toBe(2);
  }, 60_000);

  it("ends a run waiting for approval with an interrupt, and the next run's resume approves the call and streams the answer", async () => {
    const threadId = randomUUID();
    const agent = aguiAgent(alice, threadId, "approve a1");
    const parked = await runKeeping(agent);
    expect(parked.interrupts).toHaveLength(1);
    const [interrupt] = parked.interrupts;
    expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "call-a1" });
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupt?.id]);
    // A key without the approve scope cannot answer it, even on its own face.
    const bobs = aguiAgent(bob, threadId, "approve a1");
    bobs.pendingInterrupts = agent.pendingInterrupts;
    const refused = runKeeping(bobs, {
      resume: [
        { interruptId: interrupt?.id ?? "", status: "resolved", payload: { approved: true } },
      ],
    });
    await expect(refused).rejects.toThrow(/403|404/);
    const resumed = await runKeeping(agent, {
      resume: [
        { interruptId: interrupt?.id ?? "", status: "resolved", payload: { approved: true } },
      ],
    });
    expect(resumed.interrupts).toEqual([]);
    expect(resumed.result).toMatch(/^done: /);
    expect(resumed.types).toContain("TOOL_CALL_RESULT");
    expect(agent.pendingInterrupts).toEqual([]);
  }, 60_000);

  it("denies a call whose interrupt the resume cancels, and refuses a resolved one without its decision", async () => {
    const threadId = randomUUID();
    const agent = aguiAgent(alice, threadId, "approve d1");
    const parked = await runKeeping(agent);
    const interruptId = parked.interrupts[0]?.id ?? "";
    const undecided = await callGateway(gateway.url, alice.secret, "POST", "/v1/agui", {
      body: {
        ...{ threadId, runId: randomUUID(), messages: [] },
        resume: [{ interruptId, status: "resolved" }],
      },
    });
    expect(undecided.status).toBe(400);
    expect(await cluster.client.pendingApprovals(threadId)).toHaveLength(1);
    const resumed = await runKeeping(agent, { resume: [{ interruptId, status: "cancelled" }] });
    expect(resumed.result).toMatch(/^done: /);
    const result = resumed.events.find((e) => e.type === "TOOL_CALL_RESULT") as
      | { content?: string }
      | undefined;
    expect(result?.content).toContain("cancelled by the user");
  }, 60_000);

  it("follows the same run from its start on another gateway after the first is SIGKILLed mid-stream, running it once", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const doomed = await startGatewayProcess(gatewayEnv);
    const agent = aguiAgent(alice, threadId, "slow s1", doomed, fetchEndingWhenCut);
    const cut = runKeeping(agent, { runId }).catch((err: Error) => err);
    await waitFor(async () => (await cluster.client.messages(threadId)).length > 1);
    doomed.process.signal("SIGKILL");
    await cut;
    const again = aguiAgent(alice, threadId, "slow s1", otherGateway);
    const rerun = await runKeeping(again, { runId });
    expect(rerun.result).toMatch(/^done: /);
    expect(rerun.types.filter((t) => t === "TOOL_CALL_START")).toHaveLength(1);
    const users = (await cluster.client.messages(threadId)).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
  }, 90_000);

  it("leaves the run going when the stream is closed, and ends it as cancelled after an abort", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const agent = aguiAgent(alice, threadId, "hold h1");
    let started: () => void = () => undefined;
    const callStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const closed = agent
      .runAgent({ runId }, { onToolCallStartEvent: () => started() })
      .catch((err: Error) => err);
    await callStarted;
    agent.abortRun();
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const status = await callGateway(gateway.url, alice.secret, "GET", `/v1/sessions/${threadId}`);
    expect(status.status).toBe(200);
    const aborted = await callGateway(
      otherGateway.url,
      alice.secret,
      "POST",
      `/v1/sessions/${threadId}/abort`,
    );
    expect(aborted.body).toMatchObject({ aborted: true });
    let outcome: string | undefined;
    await aguiAgent(alice, threadId, "hold h1", otherGateway).runAgent(
      { runId },
      {
        onRunFinishedEvent: (finished) => {
          outcome = finished.outcome;
        },
      },
    );
    expect(outcome).toBe("cancelled");
  }, 60_000);

  it("keeps a thread its key's own: another key gets 404 for its run, its reconnect, its resume and its cancel", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const parked = await runKeeping(aguiAgent(alice, threadId, "approve o1"), { runId });
    const interruptId = parked.interrupts[0]?.id ?? "";
    const post = (key: TestKey, body: Record<string, unknown>) =>
      callGateway(gateway.url, key.secret, "POST", "/v1/agui", {
        body: { threadId, messages: [{ id: "u", role: "user", content: "approve o1" }], ...body },
      });
    const resume = [{ interruptId, status: "resolved", payload: { approved: true } }];
    expect((await post(carol, { runId: randomUUID() })).status).toBe(404);
    expect((await post(carol, { runId })).status).toBe(404);
    expect((await post(carol, { runId: randomUUID(), resume })).status).toBe(404);
    expect((await post(bob, { runId: randomUUID(), resume })).status).toBe(403);
    const cancel = await callGateway(
      gateway.url,
      carol.secret,
      "POST",
      `/v1/sessions/${threadId}/abort`,
    );
    expect(cancel.status).toBe(404);
    expect(await cluster.client.pendingApprovals(threadId)).toHaveLength(1);
    await cluster.client.abort(threadId);
  }, 60_000);
});

describe("the AG-UI face's connect", () => {
  it("re-attaches with connectAgent on another gateway to a run whose gateway was SIGKILLed mid-stream: its events from the start to its end, starting nothing", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const doomed = await startGatewayProcess(gatewayEnv);
    const agent = aguiAgent(alice, threadId, "slow c1", doomed, fetchEndingWhenCut);
    const cut = runKeeping(agent, { runId }).catch((err: Error) => err);
    await waitFor(async () => (await cluster.client.messages(threadId)).length > 1);
    doomed.process.signal("SIGKILL");
    await cut;
    const connected = await connectKeeping(connectingAgent(alice, threadId, otherGateway), {
      runId,
    });
    expect(connected.types[0]).toBe("RUN_STARTED");
    expect(connected.types.at(-1)).toBe("RUN_FINISHED");
    expect(connected.result).toMatch(/^done: /);
    expect(connected.types.filter((t) => t === "TOOL_CALL_START")).toHaveLength(1);
    expect(connected.types).toContain("TOOL_CALL_RESULT");
    const users = (await cluster.client.messages(threadId)).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
    await doomed.process.stop(3000);
  }, 90_000);

  it("connects to a thread's latest run when the run id is not one of its runs: a finished one replayed, a parked one as its interrupt, which the next run's resume answers", async () => {
    const threadId = randomUUID();
    const first = await runKeeping(aguiAgent(alice, threadId, "hello f1"));
    const replayed = await connectKeeping(connectingAgent(alice, threadId, otherGateway));
    expect(replayed.result).toBe(first.result);
    expect(replayed.result).toBe("hi f1");
    const parkedThread = randomUUID();
    await runKeeping(aguiAgent(alice, parkedThread, "approve p1"));
    const agent = connectingAgent(alice, parkedThread, otherGateway);
    const parked = await connectKeeping(agent);
    expect(parked.interrupts.map((i) => i.toolCallId)).toEqual(["call-p1"]);
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([parked.interrupts[0]?.id]);
    const interruptId = parked.interrupts[0]?.id ?? "";
    const resumed = await runKeeping(agent, {
      resume: [{ interruptId, status: "resolved", payload: { approved: true } }],
    });
    expect(resumed.result).toMatch(/^done: /);
    const after = await connectKeeping(connectingAgent(alice, parkedThread, gateway));
    expect(after.result).toBe(resumed.result);
  }, 60_000);

  it("keeps a thread its key's own: another key's connect is a 404, as is a thread without a run", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    await runKeeping(aguiAgent(alice, threadId, "hello o2"), { runId });
    const connect = (key: TestKey, thread: string) =>
      callGateway(otherGateway.url, key.secret, "POST", "/v1/agui/connect", {
        body: { threadId: thread, runId, messages: [] },
      });
    expect((await connect(carol, threadId)).status).toBe(404);
    expect((await connect(alice, randomUUID())).status).toBe(404);
    await expect(connectKeeping(connectingAgent(carol, threadId, gateway))).rejects.toThrow(/404/);
  }, 60_000);
});

describe("docs/GATEWAY.md", () => {
  it("runs the AG-UI example as written, with node and @ag-ui/client", async () => {
    const lines = await runGatewayExample(
      "aguiFace.test.ts",
      "agui.mjs",
      gateway.url,
      alice.secret,
    );
    expect(lines).toEqual([
      "calling echoText",
      "done: noon in Lima",
      "2 model calls",
      "connected: done: noon in Lima",
      "",
    ]);
  }, 90_000);
});

/** Resolves once `check` holds (every 100 ms, 20 s at most). */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("timed out waiting");
}
