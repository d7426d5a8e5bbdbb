/**
 * The gateway's chat faces when the agent calls another agent: the answer a client reads is
 * the root agent's own, never the child's text (which the root's watchers also see, with its
 * `path`). Real cluster, real gateway process, the `openai` SDK and the AI SDK's reader as the
 * clients.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeLeadAndHelperYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import {
  type GatewayProcess,
  makeKey,
  openaiClient,
  startGatewayProcess,
  writeKeysFile,
} from "./support.js";

const CHILD_TEXT = "the helper's own words";

/** The lead calls its helper once, then answers with what it got; the helper streams its text. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (request.body.model === "helper-model")
    return { kind: "text", text: CHILD_TEXT, textChunks: 3 };
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "lead: done", textChunks: 2 };
  return {
    kind: "toolCalls",
    calls: [{ id: "h-1", name: "agent__helper", arguments: { input: "help" } }],
  };
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  env: {
    YIEM_AGENTS: writeLeadAndHelperYaml([]),
  },
});
const alice = makeKey("alice", { scopes: ["submit", "read"] });
let gateway: GatewayProcess;

beforeAll(async () => {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-child-faces-")), "keys.jsonl");
  await writeKeysFile(file, [alice]);
  gateway = await startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: file });
}, 90_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
});

describe("the chat faces with a child run", () => {
  it("streams the root's answer as chat completion chunks, without the child's text", async () => {
    const openai = openaiClient(gateway.url, alice.secret);
    const stream = await openai.chat.completions.create({
      model: "lead",
      messages: [{ role: "user", content: "ask your helper" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("lead: done");
    // The child did run and stream: the answer left it out, not the model.
    expect(cluster.model.requests.some((r) => r.body.model === "helper-model")).toBe(true);
  });

  it("answers useChat with the root's text parts only", async () => {
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${gateway.url}/v1/chat`,
      headers: { Authorization: `Bearer ${alice.secret}` },
      body: { agent: "lead" },
    });
    const stream = await transport.sendMessages({
      trigger: "submit-message",
      chatId: `chat-${Date.now()}`,
      messageId: undefined,
      messages: [{ id: "m-1", role: "user", parts: [{ type: "text", text: "ask again" }] }],
      abortSignal: AbortSignal.timeout(30_000),
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true }))
      last = message;
    const text = (last?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
    expect(text).toBe("lead: done");
    expect(text).not.toContain(CHILD_TEXT);
  });
});
