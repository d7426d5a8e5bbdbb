import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { runCli, startCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { leaseHolderPid } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Message = { role: string; content: unknown };

function messagesOf(request: ScriptedRequest): Message[] {
  return (request.body.messages ?? []) as Message[];
}

/** The first user message of a request: what names the scenario. */
function openingOf(request: ScriptedRequest): string {
  return String(messagesOf(request).find((m) => m.role === "user")?.content ?? "");
}

/** The last user message of a request. */
function lastInputOf(request: ScriptedRequest): string {
  return String(messagesOf(request).findLast((m) => m.role === "user")?.content ?? "");
}

function offeredTools(request: ScriptedRequest): Array<{ name: string; description: string }> {
  const tools = (request.body.tools ?? []) as Array<{
    function: { name: string; description: string };
  }>;
  return tools
    .map(({ function: { name, description } }) => ({ name, description }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function systemPrompt(request: ScriptedRequest): unknown {
  return messagesOf(request).find((m) => m.role === "system")?.content;
}

/** The tool results a request carries, in order. */
function toolResultsOf(request: ScriptedRequest): string[] {
  return messagesOf(request)
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));
}

const TRANSFER = { name: "transfer_to_billing", arguments: {} };

/** What support's model calls for each opening message. */
const SUPPORT_CALLS: Record<string, Array<{ name: string; arguments: Record<string, string> }>> = {
  "transfer please": [TRANSFER],
  "transfer twice": [TRANSFER, { name: "getTime", arguments: { timezone: "UTC" } }, TRANSFER],
  "transfer to ops": [{ name: "transfer_to_ops", arguments: {} }],
  "transfer kill": [TRANSFER],
  "transfer with approval": [TRANSFER, { name: "ledgerApproval", arguments: { label: "a1" } }],
};

/** Until the kill scenario's coordinator is killed, billing's model requests of it hang. */
let holderKilled = false;

function respondSupport(request: ScriptedRequest): ScriptedReply {
  const last = messagesOf(request).at(-1);
  if (last?.role === "tool")
    return { kind: "text", text: `support: ${toolResultsOf(request).join(" | ")}` };
  const calls = SUPPORT_CALLS[lastInputOf(request)] ?? [];
  if (calls.length === 0) return { kind: "text", text: `support: ${lastInputOf(request)}` };
  return { kind: "toolCalls", calls };
}

function respondBilling(request: ScriptedRequest): ScriptedReply {
  if (openingOf(request) === "transfer kill" && !holderKilled) return { kind: "hang" };
  const last = messagesOf(request).at(-1);
  const invoice = last?.role === "tool" ? "INV-7" : lastInputOf(request);
  return { kind: "text", text: JSON.stringify({ invoice }) };
}

function respond(request: ScriptedRequest): ScriptedReply {
  if (request.body.model === "billing-model") return respondBilling(request);
  if (request.body.model === "support-model") return respondSupport(request);
  return { kind: "text", text: `${request.body.model}: ${lastInputOf(request)}` };
}

function agentsFile(): string {
  return writeAgentsYaml([
    "agents:",
    "  support:",
    "    instructions: You help customers.",
    "    description: Answers general questions.",
    "    model: support-model",
    "    tools: [getTime, ledgerApproval]",
    "    handoffs: [billing]",
    "  billing:",
    "    instructions: You handle invoices.",
    "    description: Handles invoices and refunds.",
    "    model: billing-model",
    "    tools: [whereAmI]",
    "    outputSchema:",
    "      type: object",
    "      properties: { invoice: { type: string } }",
    "      required: [invoice]",
    "  ops:",
    "    instructions: You run operations.",
    "    model: ops-model",
  ]);
}

const cluster = useTestCluster(async () => ({
  workers: 0,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: agentsFile() },
}));

const plain = usePlainCoordinatorQueue(cluster);

interface JobResult {
  sessionId: string;
  agent: string;
  output?: unknown;
  response: { content: Array<{ type: string; text?: string }> };
}

/** Adds a request with plain bullmq (attempts: 3, so a retry would show) and waits for it. */
async function ask(data: Record<string, unknown>) {
  const job = await plain.queue.add("ask", data, { attempts: 3 });
  const settled = await job.waitUntilFinished(plain.events, 30_000).then(
    (result: JobResult) => ({ result, error: undefined }),
    (error: Error) => ({ result: undefined, error }),
  );
  return { job: await plain.queue.getJob(job.id ?? ""), ...settled };
}

/** The model requests of one session's scenario since `before`. */
function requestsOf(opening: string, before: number): ScriptedRequest[] {
  return cluster.model.requests.slice(before).filter((r) => openingOf(r) === opening);
}

/** Every event of `sessionId` from its start up to the `agentEnd` of `runId`. */
async function eventsOf(sessionId: string, runId: string): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  const options = { fromStart: true, untilAgentEnd: true, runId };
  for await (const event of cluster.client.events(sessionId, options)) events.push(event);
  return events;
}

describe("a handoff", () => {
  it("goes on in the same run with the target's instructions, tools, model and output schema", async () => {
    const before = cluster.model.requests.length;
    const { job, result, error } = await ask({
      agent: "support",
      sessionId: "s-handoff-1",
      input: "transfer please",
    });
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ agent: "billing", output: { invoice: "INV-7" } });
    const [first, second, ...more] = requestsOf("transfer please", before);
    expect(more).toEqual([]);
    expect(first?.body.model).toBe("support-model");
    expect(systemPrompt(first as ScriptedRequest)).toBe("You help customers.");
    expect(offeredTools(first as ScriptedRequest)).toEqual([
      { name: "getTime", description: expect.any(String) },
      { name: "ledgerApproval", description: expect.any(String) },
      {
        name: "transfer_to_billing",
        description: 'Hand the conversation over to agent "billing": Handles invoices and refunds.',
      },
    ]);
    expect(first?.body.response_format).toBeUndefined();
    const after = second as ScriptedRequest;
    expect(after.body.model).toBe("billing-model");
    expect(systemPrompt(after)).toBe("You handle invoices.");
    expect(offeredTools(after).map((t) => t.name)).toEqual(["whereAmI"]);
    expect(after.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { schema: { required: ["invoice"] } },
    });
    // The same transcript: the opening input, support's call, and its answered result.
    expect(messagesOf(after).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(toolResultsOf(after)).toEqual(["transferred to billing"]);

    const events = await eventsOf("s-handoff-1", job?.id ?? "");
    expect(events.filter((e) => e.type === "agentStart")).toHaveLength(1);
    expect(events.find((e) => e.type === "agentStart")).toMatchObject({ agent: "support" });
    const handoffs = events.filter((e) => e.type === "agentHandoff");
    expect(handoffs).toEqual([
      expect.objectContaining({ from: "support", to: "billing", runId: job?.id }),
    ]);
  });

  it("makes the target the session's agent: later requests go to it, one naming the old agent fails", async () => {
    const sessionId = "s-handoff-2";
    const handed = await ask({ agent: "support", sessionId, input: "transfer please" });
    expect(handed.result?.agent).toBe("billing");
    expect(await cluster.client.sessionAgent(sessionId)).toBe("billing");

    const old = await ask({ agent: "support", sessionId, input: "hello again" });
    expect(old.error?.message).toBe(
      `invalid request: agent: session ${sessionId} belongs to agent "billing"`,
    );
    expect(old.job?.attemptsMade).toBe(1);

    const before = cluster.model.requests.length;
    const next = await ask({ sessionId, input: "next invoice" });
    expect(next.error).toBeUndefined();
    expect(next.result).toMatchObject({ agent: "billing", output: { invoice: "next invoice" } });
    const [request] = requestsOf("transfer please", before);
    expect(request?.body.model).toBe("billing-model");
    expect(systemPrompt(request as ScriptedRequest)).toBe("You handle invoices.");

    const named = await ask({ agent: "billing", sessionId, input: "named" });
    expect(named.result).toMatchObject({ agent: "billing", output: { invoice: "named" } });
  });

  it("runs the batch's other calls, takes its first transfer only, and answers every call", async () => {
    const before = cluster.model.requests.length;
    const { result, error } = await ask({
      agent: "support",
      sessionId: "s-handoff-3",
      input: "transfer twice",
    });
    expect(error).toBeUndefined();
    expect(result?.agent).toBe("billing");
    const [, after] = requestsOf("transfer twice", before);
    expect(after?.body.model).toBe("billing-model");
    const [transferred, time, second, ...more] = toolResultsOf(after as ScriptedRequest);
    expect(more).toEqual([]);
    expect(transferred).toBe("transferred to billing");
    expect(time).toContain("UTC"); // support's getTime ran, though billing lacks it
    expect(second).toContain(
      'not transferred to "billing": this batch already transfers to "billing"',
    );
    const messages = await cluster.client.messages("s-handoff-3");
    const results = messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => m.isError)).toEqual([false, false, true]);
  });

  it("takes effect when a batch parked for an approval resumes, from the transfer's stored result", async () => {
    const sessionId = "s-handoff-5";
    const before = cluster.model.requests.length;
    const awaiting = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true }))
        if (event.type === "toolApprovalRequested") return event.callKey;
      return "";
    })();
    const { runId } = await cluster.client.send("transfer with approval", {
      agent: "support",
      sessionId,
    });
    const callKey = await awaiting;
    expect(await cluster.client.sessionAgent(sessionId)).toBe("support"); // parked: not yet
    await cluster.client.approve(sessionId, callKey, { by: "test", timeoutMs: 20_000 });
    const answer = await cluster.client.waitForAnswer(runId, { timeoutMs: 30_000 });
    expect(answer.agent).toBe("billing");
    expect(answer.response.output).toEqual({ invoice: "INV-7" });
    const [, after, ...more] = requestsOf("transfer with approval", before);
    expect(more).toEqual([]);
    expect(after?.body.model).toBe("billing-model");
    expect(toolResultsOf(after as ScriptedRequest)).toEqual([
      "transferred to billing",
      "a1 recorded",
    ]);
    const events = await eventsOf(sessionId, runId);
    expect(events.filter((e) => e.type === "agentHandoff")).toHaveLength(1);
  });

  it("to an agent not in the handoffs is an error result, and the session keeps its agent", async () => {
    const { result, error } = await ask({
      agent: "support",
      sessionId: "s-handoff-4",
      input: "transfer to ops",
    });
    expect(error).toBeUndefined();
    expect(result?.agent).toBe("support");
    expect(result?.response.content[0]?.text).toBe(
      'support: agent "support" may not hand off to "ops" (its handoffs: billing)',
    );
    expect(await cluster.client.sessionAgent("s-handoff-4")).toBe("support");
  });

  it("is shown by yiem send and yiem watch", async () => {
    const sent = await runCli(["send", "--agent", "support", "transfer please"], cluster.env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/✔ transfer_to_billing\(\{\}\).* — transferred to billing/);
    expect(sent.stdout).toContain("⇄ handed over from support to billing");
    expect(sent.stdout).toContain('{"invoice":"INV-7"}');
    const watch = startCli(["watch", "s-handoff-1", "--from-start"], cluster.env);
    await watch.waitFor(/⇄ handed over from support to billing/);
    watch.interrupt();
    expect((await watch.done).code).toBe(130);
  });
});

describe("a handoff and a coordinator SIGKILLed right after it", () => {
  it("resumes the run on another coordinator as the target, handing off once", async () => {
    const sessionId = "s-handoff-kill";
    const before = cluster.model.requests.length;
    const killed = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type !== "agentHandoff") continue;
        const pid = await leaseHolderPid(cluster.redisTarget, cluster.redis.prefix, sessionId);
        const holder = cluster.coordinators.find((c) => c.pid === pid);
        if (!holder) throw new Error(`no coordinator holds ${sessionId} (lease pid ${pid})`);
        holder.signal("SIGKILL");
        await holder.exited;
        holderKilled = true;
        return holder.pid;
      }
      return undefined;
    })();
    const { runId } = await cluster.client.send("transfer kill", { agent: "support", sessionId });
    const killedPid = await killed;
    expect(killedPid).toBeDefined();
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.output).toEqual({ invoice: "INV-7" });

    const requests = requestsOf("transfer kill", before);
    // support asked once; billing maybe once before the kill (it hung), then once resumed.
    expect(requests.filter((r) => r.body.model === "support-model")).toHaveLength(1);
    const resumed = requests.at(-1) as ScriptedRequest;
    expect(resumed.body.model).toBe("billing-model");
    expect(systemPrompt(resumed)).toBe("You handle invoices.");
    expect(offeredTools(resumed).map((t) => t.name)).toEqual(["whereAmI"]);
    const messages = await cluster.client.messages(sessionId);
    expect(messages.filter((m) => m.role === "toolResult")).toHaveLength(1);
    const events = await eventsOf(sessionId, runId);
    expect(events.filter((e) => e.type === "agentHandoff")).toHaveLength(1);
    expect(await cluster.client.sessionAgent(sessionId)).toBe("billing");
  }, 45_000);
});
