import { DecisionRefusedError } from "@yiem/core";
import { createUIMessageStream, pipeUIMessageStreamToResponse } from "ai";
import type { z } from "zod";
import { chatRequestSchema } from "../faceSchemas.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, type RouteReply } from "../http/route.js";
import { type GatewayKey, hasScope } from "../keys/gatewayKey.js";
import { errorSchema } from "../schemas.js";
import { followRun, streamSignal } from "./followRun.js";
import { type PlannedRun, startRun } from "./runs.js";
import { expectVisibleSession } from "./sessionAccess.js";
import { UiMessageChunks } from "./uiMessageChunks.js";

type ChatRequest = z.infer<typeof chatRequestSchema>;
type UiPart = ChatRequest["messages"][number]["parts"][number];
/** A part of a run's input, as `POST /v1/runs` takes it. */
type UserPart = { type: string; [field: string]: unknown };

/** `POST /v1/chat`: the AI SDK UI face (`useChat` with `DefaultChatTransport({ api: "/v1/chat" })`). */
export const chatRoute = defineRoute({
  method: "POST",
  path: "/v1/chat",
  summary:
    "The AI SDK's chat endpoint: takes what useChat sends ({ id, messages }; id is the session, the last user message the run's input; { agent } in the transport's body picks the agent) and answers with the AI SDK UI message stream over SSE: text, reasoning, tool parts (input, output, approval requests), finish with the run's usage as message metadata. A last assistant message with tool approval responses (addToolApprovalResponse) decides those calls (approve scope) and streams the resumed run. X-Yiem-Session and X-Yiem-Run name the session and run.",
  scope: "submit",
  body: chatRequestSchema,
  holds: () => "long",
  responses: {
    200: { description: "the UI message stream", mediaType: "text/event-stream" },
    400: { description: "invalid request", schema: errorSchema },
    403: { description: "the key may not use this agent or decide calls", schema: errorSchema },
    404: { description: "the session is not the key's", schema: errorSchema },
    409: { description: "an answered approval no longer waits", schema: errorSchema },
    429: {
      description: "too many requests, runs or requests waiting at once",
      schema: errorSchema,
    },
  },
  async handle({ res, key, body, services }): Promise<RouteReply> {
    const last = body.messages.at(-1);
    const decisions = last?.role === "assistant" ? approvalResponsesOf(last.parts) : [];
    const afterSeq = await services.store.latestEventSeq(body.id);
    const run =
      decisions.length > 0
        ? await decideApprovals(services, key, body.id, decisions)
        : await startRun(services, key, {
            input: { role: "user", content: userPartsOf(last?.role === "user" ? last.parts : []) },
            sessionId: body.id,
            ...(body.agent !== undefined ? { agent: body.agent } : {}),
          });
    await streamAnswer(
      services,
      key,
      res,
      run,
      afterSeq,
      decisions.length > 0 ? last?.id : undefined,
    );
    return { kind: "streamed" };
  },
});

/** Streams the run's events as UI message chunks until its `agentEnd` (or the client leaves). */
async function streamAnswer(
  services: GatewayServices,
  key: GatewayKey,
  res: Parameters<typeof pipeUIMessageStreamToResponse>[0]["response"],
  run: PlannedRun,
  afterSeq: number,
  continuedMessageId: string | undefined,
): Promise<void> {
  const { signal, release } = streamSignal(services, res, key);
  const chunks = new UiMessageChunks();
  const parked = new AbortController();
  const watch = watchForPark(services, run, chunks, parked);
  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      writer.write({ type: "start", messageId: continuedMessageId ?? run.runId });
      const until = AbortSignal.any([signal, parked.signal]);
      try {
        for await (const event of followRun(services, run, afterSeq, until)) {
          for (const chunk of chunks.chunksOf(event)) writer.write(chunk);
        }
      } finally {
        watch.stop();
      }
      if (parked.signal.aborted && !signal.aborted) {
        for (const chunk of chunks.parked(run.sessionId, run.runId)) writer.write(chunk);
      }
    },
    onError: (err) => {
      if (err instanceof GatewayError) return err.message;
      services.log.warn(
        { sessionId: run.sessionId, err: (err as Error).message },
        "chat stream failed",
      );
      return "the answer stream failed";
    },
  });
  pipeUIMessageStreamToResponse({
    response: res,
    stream,
    headers: {
      "X-Yiem-Session": run.sessionId,
      "X-Yiem-Run": run.runId,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
    keepAliveMs: services.heartbeatMs,
  });
  await new Promise<void>((resolve) => res.once("close", resolve));
  release();
}

/** How often a stream with a call awaiting a decision looks whether its run parked. */
const PARK_CHECK_MS = 250;

/**
 * While a call of the answer awaits a decision, looks whether the run parked (`runStatus`);
 * when it has, fires `parked`, which ends the answer (the client sends its decision in a new
 * request, or decides through `POST /v1/approvals` and sends the chat again).
 */
function watchForPark(
  services: GatewayServices,
  run: PlannedRun,
  chunks: UiMessageChunks,
  parked: AbortController,
) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async () => {
    if (chunks.awaitsDecision) {
      const status = await services.client
        .runStatus(run.runId, { sessionId: run.sessionId })
        .catch(() => undefined);
      if (status?.status === "parked" && chunks.awaitsDecision) return parked.abort();
    }
    if (!stopped) timer = setTimeout(look, PARK_CHECK_MS);
  };
  timer = setTimeout(look, PARK_CHECK_MS);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The run input of a user message's parts: its text, and its images (files `image/*`) as image parts. */
function userPartsOf(parts: UiPart[]): UserPart[] {
  const input: UserPart[] = [];
  for (const part of parts) {
    if (part.type === "text" && typeof part.text === "string") {
      input.push({ type: "text", text: part.text });
    } else if (isImageFile(part)) {
      input.push({ type: "image_url", image_url: { url: part.url as string } });
    }
  }
  if (input.length === 0) {
    throw new GatewayError(
      400,
      "invalid_request",
      "messages: the last message must be a user message with text or an image",
      "messages",
    );
  }
  return input;
}

function isImageFile(part: UiPart): boolean {
  return (
    part.type === "file" &&
    typeof part.url === "string" &&
    typeof part.mediaType === "string" &&
    part.mediaType.startsWith("image/")
  );
}

/** A decision the client made on a call awaiting approval (`addToolApprovalResponse`). */
interface ApprovalResponse {
  callKey: string;
  approved: boolean;
  reason?: string;
}

/** The approval responses of a message's tool parts (state `approval-responded`). */
function approvalResponsesOf(parts: UiPart[]): ApprovalResponse[] {
  const responses: ApprovalResponse[] = [];
  for (const part of parts) {
    const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown };
    if (part.state !== "approval-responded" || typeof approval?.id !== "string") continue;
    if (typeof approval.approved !== "boolean") continue;
    responses.push({
      callKey: approval.id,
      approved: approval.approved,
      ...(typeof approval.reason === "string" ? { reason: approval.reason.slice(0, 2000) } : {}),
    });
  }
  return responses;
}

/**
 * Records the key's decisions on calls of `sessionId` awaiting approval (as `POST
 * /v1/approvals`: the key's name as `by`) and returns the parked run they resume. 403
 * without the approve scope, 409 when a call no longer waits.
 */
async function decideApprovals(
  services: GatewayServices,
  key: GatewayKey,
  sessionId: string,
  decisions: ApprovalResponse[],
): Promise<PlannedRun> {
  if (!hasScope(key, "approve")) {
    throw new GatewayError(403, "forbidden", 'this key lacks the "approve" scope');
  }
  await expectVisibleSession(services, key, sessionId);
  const pending = await services.client.pendingApprovals(sessionId);
  let runId: string | undefined;
  for (const decision of decisions) {
    const waiting = pending.find((p) => p.callKey === decision.callKey);
    if (!waiting) continue; // decided already (by this chat's earlier request, or elsewhere)
    runId = waiting.runId;
    const options = { by: key.name, ...(decision.reason ? { reason: decision.reason } : {}) };
    try {
      if (decision.approved) await services.client.approve(sessionId, decision.callKey, options);
      else await services.client.deny(sessionId, decision.callKey, options);
    } catch (err) {
      if (err instanceof DecisionRefusedError) {
        throw new GatewayError(409, "not_waiting", err.message, "messages");
      }
      throw err;
    }
  }
  if (runId === undefined) {
    throw new GatewayError(
      409,
      "not_waiting",
      "no call of these approval responses waits",
      "messages",
    );
  }
  return { runId, sessionId };
}
