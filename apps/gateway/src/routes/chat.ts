import { createUIMessageStream, pipeUIMessageStreamToResponse, type UIMessageChunk } from "ai";
import type { z } from "zod";
import { chatRequestSchema } from "../faceSchemas.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, type RouteReply } from "../http/route.js";
import { type GatewayKey, hasScope } from "../keys/gatewayKey.js";
import { errorSchema } from "../schemas.js";
import { openLiveEvents, startFollowedRun } from "./followFirst.js";
import { followRun, type RunEvents, streamSignal } from "./followRun.js";
import { watchParkedRun } from "./parkedRun.js";
import type { PlannedRun } from "./runs.js";
import { expectVisibleSession } from "./sessionAccess.js";
import { UiMessageChunks } from "./uiMessageChunks.js";
import { decideCall, locateWaitingCall } from "./waitingCalls.js";

type ChatRequest = z.infer<typeof chatRequestSchema>;
type UiPart = ChatRequest["messages"][number]["parts"][number];
/** A part of a run's input, as `POST /v1/runs` takes it. */
type UserPart = { type: string; [field: string]: unknown };

/** `POST /v1/chat`: the AI SDK UI face (`useChat` with `DefaultChatTransport({ api: "/v1/chat" })`). */
export const chatRoute = defineRoute({
  method: "POST",
  path: "/v1/chat",
  summary:
    "The AI SDK's chat endpoint: takes what useChat sends ({ id, messages }; id is the session, the last user message the run's input; { agent } in the transport's body picks the agent of a new chat; a continued chat is answered by its session's current agent, after a handoff the one it was handed to) and answers with the AI SDK UI message stream over SSE: text, reasoning, tool parts (input, output, approval requests), finish with the run's usage as message metadata. When the run waits for approval (a call of its own, or of a child run: its tool part's id is <child session>/<call id>), the answer ends with the approval requests and finish reason tool-calls (metadata awaitingApproval). A last assistant message with tool approval responses (addToolApprovalResponse) decides those calls where they wait (approve scope) and streams the resumed run. X-Yiem-Session and X-Yiem-Run name the session and run.",
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
    const responses = last?.role === "assistant" ? approvalResponsesOf(last.parts) : [];
    const chunks = new UiMessageChunks(body.id);
    const answer =
      responses.length > 0
        ? await decideApprovals(services, key, body.id, responses, chunks)
        : await startChatRun(services, key, body);
    try {
      await streamAnswer(services, key, res, answer.run, answer.afterSeq, {
        chunks,
        first: answer.first,
        continuedMessageId: responses.length > 0 ? last?.id : undefined,
        events: answer.events,
      });
    } finally {
      answer.events.close();
    }
    return { kind: "streamed" };
  },
});

/**
 * Starts the run of the chat's last user message, followed since before it was queued
 * (`startFollowedRun`): its text streams as its deltas.
 */
async function startChatRun(
  services: GatewayServices,
  key: GatewayKey,
  body: ChatRequest,
): Promise<AnsweredRun> {
  const last = body.messages.at(-1);
  const input = {
    role: "user" as const,
    content: userPartsOf(last?.role === "user" ? last.parts : []),
  };
  const { run, events } = await startFollowedRun(
    services,
    key,
    { input, sessionId: body.id, ...(body.agent !== undefined ? { agent: body.agent } : {}) },
    undefined,
    "newSession",
  );
  return { run, afterSeq: run.afterSeq, first: [], events };
}

/**
 * Streams the run's events as UI message chunks until its `agentEnd`, or until it waits for
 * approval (`watchParkedRun`: the answer then ends with the approval requests, a child run's
 * included), or the client leaves. `chunks` may hold chunks to send first (decisions).
 */
async function streamAnswer(
  services: GatewayServices,
  key: GatewayKey,
  res: Parameters<typeof pipeUIMessageStreamToResponse>[0]["response"],
  run: PlannedRun,
  afterSeq: number,
  answer: {
    chunks: UiMessageChunks;
    first?: UIMessageChunk[];
    continuedMessageId?: string;
    /** The run's events, followed since before it was queued or resumed (`followFirst.ts`). */
    events?: RunEvents;
  },
): Promise<void> {
  const { signal, release } = streamSignal(services, res, key);
  const { chunks } = answer;
  const watch = watchParkedRun(services, run, afterSeq);
  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      writer.write({ type: "start", messageId: answer.continuedMessageId ?? run.runId });
      for (const chunk of answer.first ?? []) writer.write(chunk);
      const until = AbortSignal.any([signal, watch.signal]);
      let ended = false;
      try {
        const followed = followRun(services, run, afterSeq, until, watch.saw, answer.events);
        for await (const event of followed) {
          for (const chunk of chunks.chunksOf(event)) writer.write(chunk);
          ended ||= event.type === "agentEnd" && !event.path;
        }
      } finally {
        watch.stop();
      }
      if (!ended && watch.signal.aborted && !signal.aborted) {
        for (const chunk of chunks.parked(run.runId, watch.pending)) writer.write(chunk);
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

/** The run a chat answers: started now, or resumed by its approval responses; followed first. */
interface AnsweredRun {
  run: PlannedRun;
  /** The session's latest stored event before the run was queued or the decisions sent. */
  afterSeq: number;
  /** The chunks that tell of decisions on child runs' calls, sent first (a resume's). */
  first: UIMessageChunk[];
  /** The run's events, live before it was queued or the first decision sent (`followFirst.ts`). */
  events: RunEvents;
}

/**
 * Records the key's decisions on calls awaiting approval in `sessionId`'s tree (as `POST
 * /v1/approvals`: in the session where each call waits, a child run's for a child's call, the
 * key's name as `by`), tells `chunks` of them, and returns the parked run they resume: the
 * session's, its events followed since before the first decision was sent (so the resumed
 * run's text streams as its deltas). 403 without the approve scope, 409 when no call of them
 * waits.
 */
async function decideApprovals(
  services: GatewayServices,
  key: GatewayKey,
  sessionId: string,
  responses: ApprovalResponse[],
  chunks: UiMessageChunks,
): Promise<AnsweredRun> {
  if (!hasScope(key, "approve")) {
    throw new GatewayError(403, "forbidden", 'this key lacks the "approve" scope');
  }
  await expectVisibleSession(services, key, sessionId);
  const afterSeq = await services.store.latestEventSeq(sessionId);
  let resumed: AnsweredRun | undefined;
  const first: UIMessageChunk[] = [];
  try {
    for (const response of responses) {
      const decision = {
        callId: response.callKey,
        approved: response.approved,
        ...(response.reason ? { reason: response.reason } : {}),
      };
      const call = await locateWaitingCall(services, sessionId, decision.callId, "messages");
      if (!call) continue; // decided already (by this chat's earlier request, or elsewhere)
      // Read before deciding: the resumed run may end, and its record go, before the decision returns.
      const runId =
        resumed?.run.runId ??
        (call.sessionId === sessionId ? call.runId : await services.store.openRunOf(sessionId));
      if (!resumed && runId !== undefined) {
        const run = { runId, sessionId };
        resumed = { run, afterSeq, first, events: await openLiveEvents(services, run, afterSeq) };
      }
      await decideCall(services, call, decision, key.name, "messages");
      if (call.sessionId !== sessionId) {
        first.push(...chunks.decided(`${call.sessionId}/${call.toolCallId}`, response.approved));
      }
    }
  } catch (err) {
    resumed?.events.close();
    throw err;
  }
  if (!resumed) {
    throw new GatewayError(
      409,
      "not_waiting",
      "no call of these approval responses waits",
      "messages",
    );
  }
  return resumed;
}
