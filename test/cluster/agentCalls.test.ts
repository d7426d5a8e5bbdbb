/**
 * Agents that call agents (`agents: [...]` in `YIEM_AGENTS`), with real coordinator and worker
 * processes and the scripted model: a parent's batch of two child agents and one plain tool
 * runs its children in parallel as coordinator jobs of their own, and gets their answers back
 * in call order; a child's structured output is its answer; a child that ends on its budget is
 * an error result; a call past `YIEM_MAX_AGENT_DEPTH` is an error result; the tree is listed.
 */
import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { runCli } from "../support/cliProcess.js";
import { useLedgerCluster } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Message = { role: string; content: unknown };

/** Resolves when the model named `model` has been asked (a child run started); rejects after 15 s. */
const asked = new Map<string, () => void>();
const askedPromises = new Map<string, Promise<void>>();
function whenAsked(model: string): Promise<void> {
  let promise = askedPromises.get(model);
  if (!promise) {
    promise = new Promise<void>((resolve) => asked.set(model, resolve));
    askedPromises.set(model, promise);
  }
  return promise;
}

/** Waits for `model` to be asked too, or 15 s: a child that ran alone answers "alone". */
async function alongside(model: string): Promise<boolean> {
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000));
  return Promise.race([whenAsked(model).then(() => true), timeout]);
}

function lastUserText(messages: Message[]): string {
  return String(messages.findLast((m) => m.role === "user")?.content ?? "");
}

/** The text of the tool results after the model's last message, in order. */
function toolTexts(messages: Message[]): string[] {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(lastAssistant + 1).map((m) => String(m.content));
}

async function respond(request: ScriptedRequest): Promise<ScriptedReply> {
  const messages = (request.body.messages ?? []) as Message[];
  const model = String(request.body.model);
  void whenAsked(model);
  asked.get(model)?.();
  const input = lastUserText(messages);
  const afterTools = messages.at(-1)?.role === "tool";
  if (model === "lead-model") {
    if (afterTools) return { kind: "text", text: `lead got: ${toolTexts(messages).join(" | ")}` };
    if (input.startsWith("huge"))
      return {
        kind: "toolCalls",
        calls: [{ name: "agent__researcher", arguments: { input: "h".repeat(9000) } }],
      };
    if (input.startsWith("broke"))
      return { kind: "toolCalls", calls: [{ name: "agent__broke", arguments: { input } }] };
    return {
      kind: "toolCalls",
      calls: [
        { name: "agent__researcher", arguments: { input: `facts about ${input}` } },
        { name: "agent__writer", arguments: { topic: input } },
        { name: "ledgerRemote", arguments: { label: `lead-${input}`, ms: 100 } },
      ],
    };
  }
  if (model === "researcher-model") {
    const together = await alongside("writer-model");
    return { kind: "text", text: `${together ? "" : "alone: "}${input}` };
  }
  if (model === "writer-model") {
    const together = await alongside("researcher-model");
    return {
      kind: "text",
      text: JSON.stringify({ draft: `${together ? "" : "alone: "}${input}` }),
    };
  }
  const chained = CHAIN.indexOf(model.replace("-model", ""));
  if (chained >= 0) {
    if (afterTools)
      return { kind: "text", text: `${CHAIN[chained]}: ${toolTexts(messages).join("")}` };
    const next = CHAIN[chained + 1];
    if (next)
      return { kind: "toolCalls", calls: [{ name: `agent__${next}`, arguments: { input } }] };
    const tool = input.startsWith("approve") ? "ledgerApproval" : "waitForAbort";
    return { kind: "toolCalls", calls: [{ name: tool, arguments: { label: input } }] };
  }
  if (model === "teller-model") {
    if (afterTools) return { kind: "text", text: `teller: ${toolTexts(messages).join("")}` };
    return { kind: "toolCalls", calls: [{ name: "agent__narrator", arguments: { input } }] };
  }
  if (model === "narrator-model")
    return { kind: "text", text: NARRATED, textChunks: 3, chunkDelayMs: 150 };
  if (model === "nester-model") {
    if (afterTools) return { kind: "text", text: `nested(${toolTexts(messages).join("")})` };
    return {
      kind: "toolCalls",
      calls: [{ name: "agent__nester", arguments: { input: "deeper" } }],
    };
  }
  return { kind: "text", text: `${model}: ${input}` };
}

/** The narrator's answer, streamed in pieces. */
const NARRATED = "once upon a time the end";

/** A tree three deep: the manager calls the assistant, which calls the clerk, which runs a tool. */
const CHAIN = ["manager", "assistant", "clerk"];

function agentsFile(): string {
  return writeAgentsYaml([
    "agents:",
    "  lead:",
    "    instructions: You lead.",
    "    model: lead-model",
    "    tools: [ledgerRemote]",
    "    agents: [researcher, writer, broke]",
    "  researcher:",
    "    description: Finds facts about a topic.",
    "    instructions: You research.",
    "    model: researcher-model",
    "    tools: []",
    "  writer:",
    "    description: Writes a draft on a topic.",
    "    instructions: You write.",
    "    model: writer-model",
    "    tools: []",
    "    inputSchema: { type: object, properties: { topic: { type: string } }, required: [topic] }",
    "    outputSchema: { type: object, properties: { draft: { type: string } }, required: [draft] }",
    "  broke:",
    "    instructions: You have no budget.",
    "    model: broke-model",
    "    budget: { maxModelCalls: 0 }",
    "  teller:",
    "    instructions: You tell.",
    "    model: teller-model",
    "    tools: []",
    "    agents: [narrator]",
    "  narrator:",
    "    instructions: You narrate.",
    "    model: narrator-model",
    "    tools: []",
    "  nester:",
    "    instructions: You nest.",
    "    model: nester-model",
    "    tools: []",
    "    agents: [nester]",
    "  manager:",
    "    instructions: You manage.",
    "    model: manager-model",
    "    tools: []",
    "    agents: [assistant]",
    "  assistant:",
    "    instructions: You assist.",
    "    model: assistant-model",
    "    tools: []",
    "    agents: [clerk]",
    "  clerk:",
    "    instructions: You do the work.",
    "    model: clerk-model",
    "    tools: [ledgerApproval, waitForAbort]",
  ]);
}

const { cluster, ledger } = useLedgerCluster({
  workers: 1,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: agentsFile(), YIEM_MAX_AGENT_DEPTH: "2", YIEM_MAX_INPUT_BYTES: "8000" },
});

const plain = usePlainCoordinatorQueue(cluster);

/** Sends `text` to `agent` on a new session and waits for the answer (the job's return value). */
async function ask(agent: string, text: string, budget?: Record<string, number>) {
  const sessionId = randomUUID();
  const job = await plain.queue.add("ask", { agent, input: text, sessionId, budget });
  const result = (await job.waitUntilFinished(plain.events, 45_000)) as {
    response: { content: Array<{ text: string }>; stopReason: string };
    usage: { modelCalls: number; toolCalls: number };
  };
  return { sessionId, result, text: result.response.content[0]?.text ?? "" };
}

/** The requests the model got for `model`. */
function requestsOf(model: string): ScriptedRequest[] {
  return cluster.model.requests.filter((r) => r.body.model === model);
}

describe("an agent calling agents", () => {
  it("runs two child agents of one batch in parallel beside a plain tool, and answers once with results in call order", async () => {
    const topic = `otters-${randomUUID().slice(0, 8)}`;
    const { sessionId, result, text } = await ask("lead", topic);
    expect(text).toBe(
      `lead got: facts about ${topic} | ${JSON.stringify({ draft: JSON.stringify({ topic }) })} | lead-${topic} recorded`,
    );
    expect(requestsOf("lead-model")).toHaveLength(2);
    const offered = (requestsOf("lead-model")[0]?.body.tools ?? []) as Array<{
      function: { name: string; description: string; parameters: unknown };
    }>;
    expect(offered.map((t) => t.function.name).sort()).toEqual([
      "agent__broke",
      "agent__researcher",
      "agent__writer",
      "ledgerRemote",
    ]);
    expect(offered.find((t) => t.function.name === "agent__researcher")?.function).toMatchObject({
      description: "Finds facts about a topic.",
      parameters: { properties: { input: { type: "string" } }, required: ["input"] },
    });
    expect(offered.find((t) => t.function.name === "agent__writer")?.function.parameters).toEqual({
      type: "object",
      properties: { topic: { type: "string" } },
      required: ["topic"],
    });
    // The tree's usage: the lead's 2 model calls and 3 tool calls, and each child's model call.
    expect(result.usage).toMatchObject({ modelCalls: 4, toolCalls: 3 });
    const counts = await ledger.countsByCall();
    expect([...counts.values()]).toEqual([1]);

    const children = await cluster.client.children(sessionId);
    const byAgent = children.map((c) => [c.agent, c.status]).sort();
    expect(byAgent).toEqual([
      ["researcher", "done"],
      ["writer", "done"],
    ]);
    for (const child of children) {
      expect(child.usage).toMatchObject({ modelCalls: 1, toolCalls: 0 });
      expect(child.endedAt).toBeGreaterThanOrEqual(child.startedAt);
      const job = await plain.queue.getJob(`agent-${child.sessionId}`);
      expect(job?.data).toMatchObject({
        agent: child.agent,
        sessionId: child.sessionId,
        parent: { sessionId, rootSessionId: sessionId, depth: 1, callKey: child.callKey },
      });
    }

    // The root's watchers see the tree's events too, each child's with its path.
    const ends: Array<{ path?: unknown; sessionId: string }> = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    }))
      if (event.type === "agentEnd") ends.push(event);
    expect(ends.filter((e) => !e.path)).toHaveLength(1);
    for (const child of children)
      expect(ends.find((e) => e.sessionId === child.sessionId)?.path).toEqual([
        { agent: child.agent, sessionId: child.sessionId, callKey: child.callKey },
      ]);
  });

  it("streams a child's text live to the root's watchers, each piece with the child's path", async () => {
    const sessionId = randomUUID();
    const watched: BusEvent[] = [];
    const watching = (async () => {
      for await (const event of cluster.client.events(sessionId, { untilAgentEnd: true }))
        watched.push(event);
    })();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the watcher subscribed
    const { runId } = await cluster.client.send("a story", { sessionId, agent: "teller" });
    await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    await watching;
    const [narrator] = await cluster.client.children(sessionId);
    // The root's own streamed answer has no path; the child's pieces have its path.
    const updates = watched.filter((e) => e.type === "messageUpdate" && e.path);
    expect(updates.length).toBeGreaterThan(1); // live pieces, not one answer
    expect(updates.map((e) => (e as { delta?: string }).delta).join("")).toBe(NARRATED);
    for (const update of updates) {
      expect(update.live).toBe(true);
      expect(update.sessionId).toBe(narrator?.sessionId);
      expect(update.path).toEqual([
        { agent: "narrator", sessionId: narrator?.sessionId, callKey: narrator?.callKey },
      ]);
    }
    expect(watched.at(-1)).toMatchObject({ type: "agentEnd", sessionId });
  });

  it("indents the child runs' events in yiem send", async () => {
    const topic = `seals-${randomUUID().slice(0, 8)}`;
    const sent = await runCli(["send", "--agent", "lead", topic], cluster.env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(
      new RegExp(`^ {2}\\[researcher\\] ◀ stop: facts about ${topic}$`, "m"),
    );
    expect(sent.stdout).toMatch(/^ {2}\[writer\] ▶ started \(session writer-/m);
    expect(sent.stdout).toContain(`lead got: facts about ${topic}`);
  });

  it("gives the call an error result when the child stops on its budget", async () => {
    const { text } = await ask("lead", "broke now");
    expect(text).toMatch(
      /^lead got: agent "broke" ended with budget: budget reached: maxModelCalls/,
    );
  });

  it("gives the call an error result when the child's request is refused (its input over the cap)", async () => {
    const { text } = await ask("lead", "huge one");
    expect(text).toMatch(/^lead got: agent "researcher" ended with error: invalid request: input/);
  });

  it("starts no child when the tree's budget has no model call left: the calls say so, the tree stops with budget", async () => {
    const { sessionId, result } = await ask("lead", `tight-${randomUUID().slice(0, 8)}`, {
      maxModelCalls: 1,
    });
    expect(result.response.stopReason).toBe("budget");
    expect(await cluster.client.children(sessionId)).toEqual([]);
    const messages = await cluster.client.messages(sessionId);
    const results = messages.filter((m) => m.role === "toolResult");
    expect(results).toHaveLength(3);
    const refused = results.filter((m) =>
      JSON.stringify(m.content).includes("the tree's budget was reached: maxModelCalls"),
    );
    expect(refused.map((m) => m.toolName).sort()).toEqual(["agent__researcher", "agent__writer"]);
    // The tree's usage is the sum over its nodes: the lead's one model call, no child's.
    expect(result.usage).toMatchObject({ modelCalls: 1, toolCalls: 3 });
  });

  it("answers a call past YIEM_MAX_AGENT_DEPTH with an error result", async () => {
    const { sessionId, text } = await ask("nester", "nest");
    expect(text).toMatch(
      /^nested\(nested\(nested\(agent "nester" was not called: the call is past the depth cap of 2 nested agents/,
    );
    const [child] = await cluster.client.children(sessionId);
    const [grandchild] = await cluster.client.children(child?.sessionId ?? "");
    expect(grandchild?.agent).toBe("nester");
    expect(await cluster.client.children(grandchild?.sessionId ?? "")).toEqual([]);
  });
});

describe("a forged parent", () => {
  it("is refused at intake: a plain BullMQ job naming another root's session as its parent shows nothing in that root's stream", async () => {
    const victim = await ask("narrator", "the victim's own story");
    const forgedSession = `narrator-${randomUUID()}`;
    const marker = `attacker-text-${randomUUID()}`;
    const callKey = "call_forged";
    const forged = await plain.queue.add("ask", {
      agent: "narrator",
      input: marker,
      sessionId: forgedSession,
      parent: {
        sessionId: victim.sessionId,
        callKey,
        rootSessionId: victim.sessionId,
        depth: 1,
        path: [{ agent: "narrator", sessionId: forgedSession, callKey }],
      },
    });
    await expect(forged.waitUntilFinished(plain.events, 45_000)).rejects.toThrow(
      `invalid request: parent: not proved: session ${victim.sessionId} has no call "${callKey}" waiting for session ${forgedSession}`,
    );
    // Nothing of it reached the victim's stream (read up to the end of a later run of its own),
    // nor its tree, nor the forged session itself.
    const later = await cluster.client.send("and then", {
      sessionId: victim.sessionId,
      agent: "narrator",
    });
    await cluster.client.waitForResponse(later.requestId, { timeoutMs: 30_000 });
    const events: BusEvent[] = [];
    for await (const event of cluster.client.events(victim.sessionId, {
      fromStart: true,
      untilAgentEnd: true,
      requestId: later.requestId,
    }))
      events.push(event);
    expect(events.filter((e) => e.type === "agentEnd")).toHaveLength(2);
    expect(JSON.stringify(events)).not.toContain(marker);
    expect(events.filter((e) => e.sessionId !== victim.sessionId)).toEqual([]);
    expect(await cluster.client.children(victim.sessionId)).toEqual([]);
    expect(await cluster.client.hasSession(forgedSession)).toBe(false);
    expect(requestsOf("narrator-model").some((r) => JSON.stringify(r.body).includes(marker))).toBe(
      false,
    );
  });
});

/** Polls `read` every 100 ms until `done` holds (up to 20 s), and returns what it read last. */
async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (const until = Date.now() + 20_000; !done(value) && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/** The grandchild session of a three-deep tree (the clerk's), once it is listed. */
async function clerkSession(rootSessionId: string): Promise<string> {
  const [assistant] = await pollUntil(
    () => cluster.client.children(rootSessionId),
    (c) => c.length > 0,
  );
  const [clerk] = await pollUntil(
    () => cluster.client.children(assistant?.sessionId ?? ""),
    (c) => c.length > 0,
  );
  return clerk?.sessionId ?? "";
}

describe("one tree, one set of controls", () => {
  it("lists a grandchild's call awaiting approval at the root with its chain, approved from the CLI", async () => {
    const sessionId = randomUUID();
    const label = `approve-${randomUUID().slice(0, 8)}`;
    const { runId } = await cluster.client.send(label, { sessionId, agent: "manager" });
    const [pending] = await pollUntil(
      () => cluster.client.pendingApprovals(sessionId),
      (p) => p.length > 0,
    );
    expect(pending?.toolName).toBe("ledgerApproval");
    expect(pending?.chain?.map((link) => link.agent)).toEqual(CHAIN);
    expect(pending?.chain?.[0]?.sessionId).toBe(sessionId);
    expect(pending?.chain?.[2]).toMatchObject({
      sessionId: pending?.sessionId,
      callKey: pending?.callKey,
    });
    const everywhere = await cluster.client.pendingApprovals();
    expect(everywhere.find((p) => p.callKey === pending?.callKey)?.chain).toEqual(pending?.chain);
    const listed = await runCli(["pending", sessionId], cluster.env);
    expect(listed.stdout).toContain("manager > assistant > clerk");

    // A request forging the clerk's call as its parent is refused, and changes nothing of the tree.
    const assistant = pending?.chain?.[1];
    const forged = await plain.queue.add("ask", {
      agent: "broke",
      input: "forged",
      sessionId: `forged-${randomUUID()}`,
      parent: {
        sessionId: assistant?.sessionId,
        callKey: assistant?.callKey,
        rootSessionId: sessionId,
        depth: 2,
      },
    });
    await expect(forged.waitUntilFinished(plain.events, 45_000)).rejects.toThrow(
      /^invalid request: parent: not proved: session assistant-\S+ has no call "[^"]+" waiting for session forged-/,
    );
    expect((await cluster.client.pendingApprovals(sessionId)).map((p) => p.callKey)).toEqual([
      pending?.callKey,
    ]);
    const [clerkEntry] = await cluster.client.children(assistant?.sessionId ?? "");
    expect(clerkEntry).toMatchObject({ sessionId: pending?.sessionId, status: "running" });
    const refused = await runCli(
      ["approve", assistant?.sessionId ?? "", assistant?.callKey ?? ""],
      cluster.env,
    );
    expect(refused.stderr).toContain('waits for a child run of agent "clerk", not for approval');

    const approved = await runCli(
      ["approve", pending?.sessionId ?? "", pending?.callKey ?? ""],
      cluster.env,
    );
    expect(approved.code).toBe(0);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    expect(response.content).toEqual([
      { type: "text", text: `manager: assistant: clerk: ${label} recorded` },
    ]);

    const tree = await runCli(["tree", sessionId], cluster.env);
    expect(tree.code).toBe(0);
    const lines = tree.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^AGENT\s+STATUS\s+USAGE\s+DURATION\s+SESSION$/);
    expect(lines[1]).toMatch(
      /^assistant\s+done\s+4 model, 2 tool, \d+ tok\s+\d+\.\ds\s+assistant-/,
    );
    expect(lines[2]).toMatch(/^ {2}clerk\s+done\s+2 model, 1 tool, \d+ tok\s+\d+\.\ds\s+clerk-/);
  });

  it("aborts every open node of the tree when the root is aborted: the grandchild's tool signal fires", async () => {
    const sessionId = randomUUID();
    const label = `abort-${randomUUID().slice(0, 8)}`;
    const { runId } = await cluster.client.send(label, { sessionId, agent: "manager" });
    const clerk = await clerkSession(sessionId);
    for await (const event of cluster.client.events(clerk, { fromStart: true }))
      if (event.type === "toolExecStart") break;
    expect(await cluster.client.abort(sessionId)).toMatchObject({ kind: "recorded" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    expect(response.stopReason).toBe("aborted");
    const fired = await pollUntil(
      () => ledger.entries(),
      (entries) => entries.some((e) => e.callId === "aborted" && e.label === label),
    );
    expect(fired.some((e) => e.callId === "aborted" && e.label === label)).toBe(true);
    const [assistant] = await pollUntil(
      () => cluster.client.children(sessionId),
      (c) => c[0]?.status !== "running",
    );
    expect(assistant?.status).toBe("aborted");
    const [clerkRun] = await pollUntil(
      () => cluster.client.children(assistant?.sessionId ?? ""),
      (c) => c[0]?.status !== "running",
    );
    expect(clerkRun?.status).toBe("aborted");
  });
});
