import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AssistantMessage, BusEvent, PendingApproval, RunUsage, StopReason } from "@yiem/core";
import type { z } from "zod";
import {
  chatCompletionRequestSchema,
  chatCompletionSchema,
  modelListSchema,
  openAiErrorSchema,
} from "../faceSchemas.js";
import { openEventStream } from "../http/eventStream.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { sessionIdSchema } from "../schemas.js";
import { listUsableAgents } from "./agents.js";
import { type FollowedStart, startFollowedRun } from "./followFirst.js";
import { followRun, streamSignal } from "./followRun.js";
import { type ParkWatch, watchParkedRun } from "./parkedRun.js";
import type { PlannedRun, RunRequest } from "./runs.js";

type CompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

/** The header that continues a session on the OpenAI-compatible face (and names it in every answer). */
export const SESSION_HEADER = "X-Yiem-Session";

/** `POST /v1/chat/completions`: the OpenAI-compatible face. */
export const chatCompletionsRoute = defineRoute({
  method: "POST",
  path: "/v1/chat/completions",
  summary:
    "OpenAI's chat completions: model is an agent's name (of a new session; a continued session is answered by its current agent, after a handoff the one it was handed to, named in the answer's model); the last user message is the run's input; the X-Yiem-Session header continues a session (without it a new one starts; every answer names it in X-Yiem-Session). The agent's tools run on the cluster and are not sent as tool_calls; content is the text of every model call of the run. With stream: chat.completion.chunk server-sent events ending in [DONE] (usage with stream_options.include_usage); without: one chat.completion with usage. When the run waits for a person's decision (a call of its own or of a child run), the answer ends there: finish_reason stop, the content saying which calls wait and how to decide them, and the extension field yiem (status awaiting_approval, the calls, how to decide them: POST /v1/approvals; the answer is then at GET /v1/runs/{runId}) on the completion or on the stream's last chunk, without usage. Errors in OpenAI's shape.",
  scope: "submit",
  body: chatCompletionRequestSchema,
  holds: () => "long",
  errorBody: openAiErrorBody,
  responses: {
    200: {
      description: "the completion (chunks as server-sent events with stream: true)",
      schema: chatCompletionSchema,
    },
    400: { description: "invalid request, or the run was refused", schema: openAiErrorSchema },
    403: { description: "the key may not use this agent", schema: openAiErrorSchema },
    404: { description: "the session is not the key's", schema: openAiErrorSchema },
    429: {
      description: "too many requests, runs or requests waiting at once",
      schema: openAiErrorSchema,
    },
    500: { description: "the run failed", schema: openAiErrorSchema },
  },
  async handle({ req, res, key, body, services }): Promise<RouteReply> {
    const sessionId = sessionOfHeader(req) ?? randomUUID();
    res.setHeader(SESSION_HEADER, sessionId);
    const request = { agent: body.model, input: lastUserInput(body), sessionId };
    const { run, events } = await startFollowedRun(services, key, request, undefined, "newSession");
    res.setHeader("X-Yiem-Run", run.runId);
    try {
      if (body.stream) {
        await streamCompletion(services, key, res, { run, events }, body);
        return { kind: "streamed" };
      }
      return json(200, await awaitCompletion(services, key, res, { run, events }));
    } finally {
      events.close();
    }
  },
});

/**
 * The completion of `started` once its run ends, or the notice that it waits for a person's
 * decision (a client gone or a gateway shutting down ends the wait with the text so far).
 */
async function awaitCompletion(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  { run, events }: FollowedStart,
) {
  const { signal, release } = streamSignal(services, res, key);
  const watch = watchParkedRun(services, run, run.afterSeq);
  try {
    const answer = new CompletionText();
    const until = AbortSignal.any([signal, watch.signal]);
    for await (const event of followRun(services, run, run.afterSeq, until, watch.saw, events)) {
      answer.add(event);
    }
    if (!answer.ended && watch.signal.aborted && !signal.aborted) {
      return awaitingCompletionOf(run, answer.text, watch);
    }
    return completionOf(run, run.agent, answer.finished());
  } finally {
    watch.stop();
    release();
  }
}

/** `GET /v1/models`: the agents the key may use, as OpenAI models. */
export const listModelsRoute = defineRoute({
  method: "GET",
  path: "/v1/models",
  summary:
    "The agents the running coordinators serve that this key may use, as OpenAI models (id: the agent's name, for model).",
  scope: "read",
  errorBody: openAiErrorBody,
  responses: { 200: { description: "the agents as models", schema: modelListSchema } },
  async handle({ key, services }) {
    const agents = await listUsableAgents(services, key);
    const data = agents.map((agent) => ({
      id: agent.name,
      object: "model" as const,
      created: 0,
      owned_by: "yiem",
    }));
    return json(200, { object: "list", data });
  },
});

/** A gateway error in OpenAI's shape: `{ error: { message, type, param, code } }`. */
export function openAiErrorBody(err: GatewayError): unknown {
  return {
    error: {
      message: err.message,
      type: openAiErrorType(err.status),
      param: err.field ?? null,
      code: err.code,
    },
  };
}

function openAiErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** The session the request continues (`X-Yiem-Session`), checked; none starts a new one. */
function sessionOfHeader(req: IncomingMessage): string | undefined {
  const value = req.headers[SESSION_HEADER.toLowerCase()];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === "") return undefined;
  if (!sessionIdSchema.safeParse(text).success) {
    throw new GatewayError(
      400,
      "invalid_request",
      `${SESSION_HEADER}: 1–128 letters, digits, '_', '.', ':' or '-'`,
      SESSION_HEADER,
    );
  }
  return text;
}

/** The run's input: the last user message (its text, or its parts). */
function lastUserInput(body: CompletionRequest): RunRequest["input"] {
  const last = body.messages.findLast((message) => message.role === "user");
  const content = last?.content;
  if (typeof content === "string" && content !== "") return content;
  if (Array.isArray(content) && content.length > 0) {
    return { role: "user", content }; // its parts are checked by the coordinators' rules
  }
  throw new GatewayError(
    400,
    "invalid_request",
    "messages: needs a user message with content",
    "messages",
  );
}

/** What a run answered, gathered from its events: its text and final response with usage. */
interface FinishedRun {
  text: string;
  response: AssistantMessage;
  usage: RunUsage;
}

/**
 * The text of a run as the OpenAI face sends it: the text of each model call (its live
 * deltas, then the rest from its `messageEnd` when deltas were missed), calls joined by a
 * blank line; tool calls and their results are left out (they ran on the cluster).
 */
class CompletionText {
  private whole = "";
  private current = "";
  private last: Extract<BusEvent, { type: "agentEnd" }> | undefined;

  /** The text so far. */
  get text(): string {
    return this.whole;
  }

  /** Whether the run's `agentEnd` was seen. */
  get ended(): boolean {
    return this.last !== undefined;
  }

  /** Adds `event`; returns the text it adds, if any. */
  add(event: BusEvent): string {
    if (event.type === "messageUpdate") return this.append(event.delta);
    if (event.type === "agentEnd") this.last = event;
    if (event.type !== "messageEnd" || event.message.role !== "assistant") return "";
    const full = event.message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    const rest = full.startsWith(this.current) ? full.slice(this.current.length) : "";
    const added = this.append(rest);
    this.current = "";
    return added;
  }

  private append(delta: string): string {
    if (delta === "") return "";
    const separator = this.current === "" && this.whole !== "" ? "\n\n" : "";
    this.current += delta;
    this.whole += separator + delta;
    return separator + delta;
  }

  /** The run's text and answer; a run that failed is a 500. */
  finished(): FinishedRun {
    if (!this.last) throw new GatewayError(500, "internal", "the run's events ended early");
    const { response, usage } = this.last;
    if (response.stopReason === "error") {
      throw new GatewayError(500, "run_failed", response.errorMessage ?? "the run failed");
    }
    return { text: this.whole, response, usage };
  }
}

function completionOf(run: PlannedRun, model: string, finished: FinishedRun) {
  return {
    id: `chatcmpl-${run.runId}`,
    object: "chat.completion",
    created: Math.floor(finished.response.timestamp / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: finished.text,
          refusal: finished.response.stopReason === "refusal" ? finished.text : null,
        },
        finish_reason: finishReasonOf(finished.response.stopReason),
        logprobs: null,
      },
    ],
    usage: usageOf(finished.usage),
  };
}

/**
 * What the face says of a run that waits for approval (the `yiem` extension field): the calls,
 * each with the session where it waits and the id `POST /v1/approvals` takes, and how to
 * decide them.
 */
export function awaitingOf(run: PlannedRun, pending: PendingApproval[]) {
  return {
    status: "awaiting_approval" as const,
    sessionId: run.sessionId,
    runId: run.runId,
    approvals: pending.map((call) => ({
      sessionId: call.sessionId,
      toolCallId: call.callKey,
      toolName: call.toolName,
      arguments: call.arguments,
      reason: call.reason,
      ...(call.chain ? { chain: call.chain } : {}),
    })),
    decide: `POST /v1/approvals with { sessionId, toolCallId, approved } for each call (a key with the approve scope); the run then resumes, and its answer is at GET /v1/runs/${run.runId}`,
  };
}

/** The text that tells a reader the run waits for approval: which calls, and how to decide them. */
function awaitingNotice(run: PlannedRun, pending: PendingApproval[]): string {
  const calls = pending
    .map((call) => `${call.toolName} (toolCallId "${call.callKey}", sessionId "${call.sessionId}")`)
    .join(", ");
  return `[awaiting approval] The run waits for a person's decision on ${calls}. Decide with POST /v1/approvals { sessionId, toolCallId, approved } (approve scope); the run then resumes, and its answer is at GET /v1/runs/${run.runId}.`;
}

/** The finished answer of a run that waits for approval: its text so far and the notice. */
function awaitingCompletionOf(run: PlannedRun & { agent: string }, text: string, watch: ParkWatch) {
  const notice = awaitingNotice(run, watch.pending);
  return {
    id: `chatcmpl-${run.runId}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: run.agent,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text === "" ? notice : `${text}\n\n${notice}`,
          refusal: null,
        },
        finish_reason: "stop",
        logprobs: null,
      },
    ],
    yiem: awaitingOf(run, watch.pending),
  };
}

function usageOf(usage: RunUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
  };
}

/** OpenAI's finish reason for how a run's final response stopped. */
function finishReasonOf(stopReason: StopReason): "stop" | "length" | "content_filter" {
  if (stopReason === "length" || stopReason === "budget") return "length";
  if (stopReason === "refusal") return "content_filter";
  return "stop";
}

/**
 * Streams the run as `chat.completion.chunk` server-sent events: the role first, the text as
 * it comes, the finish reason, the usage (with `stream_options.include_usage`), `[DONE]`. A
 * run that waits for approval ends the stream there: the notice as text, then a last chunk
 * with finish reason `stop` and the `yiem` extension naming the calls, no usage, `[DONE]`. A
 * failure after the stream began is sent as an `{ error }` event (the openai SDK throws it).
 */
async function streamCompletion(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  { run, events }: FollowedStart,
  body: CompletionRequest,
): Promise<void> {
  const { signal, release } = streamSignal(services, res, key);
  const base = { id: `chatcmpl-${run.runId}`, object: "chat.completion.chunk", model: run.agent };
  const created = Math.floor(Date.now() / 1000);
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
    send({
      ...base,
      created,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      ...extra,
    });
  const stopHeartbeat = openEventStream(res, services.heartbeatMs);
  const watch = watchParkedRun(services, run, run.afterSeq);
  try {
    chunk({ role: "assistant", content: "" });
    const answer = new CompletionText();
    const until = AbortSignal.any([signal, watch.signal]);
    for await (const event of followRun(services, run, run.afterSeq, until, watch.saw, events)) {
      const added = answer.add(event);
      if (added !== "") chunk({ content: added });
    }
    if (signal.aborted) return;
    if (!answer.ended && watch.signal.aborted) {
      const notice = awaitingNotice(run, watch.pending);
      chunk({ content: answer.text === "" ? notice : `\n\n${notice}` });
      chunk({}, "stop", { yiem: awaitingOf(run, watch.pending) });
    } else {
      const finished = answer.finished();
      chunk({}, finishReasonOf(finished.response.stopReason));
      if (body.stream_options?.include_usage) {
        send({ ...base, created, choices: [], usage: usageOf(finished.usage) });
      }
    }
    res.write("data: [DONE]\n\n");
  } catch (err) {
    const failure =
      err instanceof GatewayError ? err : new GatewayError(500, "internal", "internal error");
    if (!(err instanceof GatewayError)) {
      services.log.warn(
        { sessionId: run.sessionId, err: (err as Error).message },
        "completion stream failed",
      );
    }
    if (!signal.aborted) send(openAiErrorBody(failure));
  } finally {
    watch.stop();
    stopHeartbeat();
    release();
    res.end();
  }
}
