/**
 * The zod schemas of the faces clients already speak: the AI SDK's chat request
 * (`POST /v1/chat`) and OpenAI's chat completions and models (`POST /v1/chat/completions`,
 * `GET /v1/models`). As in `schemas.ts`, they validate requests and make the OpenAPI document.
 */
import { z } from "zod";
import { sessionIdSchema } from "./schemas.js";

/** A part of a UI message: text, a file, a tool part… (only text, image files and tool approvals are read). */
const uiPartSchema = z.looseObject({ type: z.string() });

/** A UI message as `useChat` sends it. */
const uiMessageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(uiPartSchema),
});

/** The body `useChat` (`DefaultChatTransport`) sends to `POST /v1/chat`. */
export const chatRequestSchema = z.looseObject({
  id: sessionIdSchema.describe("the chat's id: the session"),
  messages: z
    .array(uiMessageSchema)
    .min(1)
    .max(10_000)
    .describe("the chat; only the last message is read (the session keeps the rest)"),
  agent: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe(
      "the agent of a new chat (default: the coordinators' default agent); a continued chat is answered by its session's current agent. DefaultChatTransport's body option",
    ),
  trigger: z.string().optional(),
  messageId: z.string().optional(),
});

/** A message of a chat completion request. */
const chatCompletionMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
});

/** The body of `POST /v1/chat/completions` (other OpenAI fields are accepted and ignored). */
export const chatCompletionRequestSchema = z.looseObject({
  model: z
    .string()
    .min(1)
    .max(128)
    .describe(
      "the agent's name for a new session; a continued session (X-Yiem-Session) is answered by its current agent, named in the answer's model",
    ),
  messages: z
    .array(chatCompletionMessageSchema)
    .min(1)
    .max(10_000)
    .describe("only the last user message is read: the session keeps the conversation"),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
});

/** Token usage in OpenAI's shape. */
const completionUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

/**
 * What the OpenAI-compatible face adds to its answer (and to the last chunk of a stream) when
 * the run waits for approval: the calls it waits for and how to decide them.
 */
export const awaitingApprovalSchema = z.object({
  status: z.literal("awaiting_approval"),
  sessionId: z.string(),
  runId: z.string(),
  approvals: z.array(
    z.looseObject({
      sessionId: z.string().describe("where the call waits (a child run's session for its call)"),
      toolCallId: z.string().describe("what POST /v1/approvals takes, with sessionId"),
      toolName: z.string(),
      arguments: z.unknown(),
      reason: z.string(),
    }),
  ),
  decide: z.string().describe("how to decide them, and where the answer then is"),
});

/** What `POST /v1/chat/completions` answers without `stream`. */
export const chatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({
        role: z.literal("assistant"),
        content: z.string(),
        refusal: z.string().nullable(),
      }),
      finish_reason: z.enum(["stop", "length", "content_filter"]),
      logprobs: z.null(),
    }),
  ),
  usage: completionUsageSchema.optional().describe("absent while the run waits for approval"),
  yiem: awaitingApprovalSchema
    .optional()
    .describe(
      "set when the run waits for a person's decision: the answer ends there (finish_reason stop, the content saying so)",
    ),
});

/** What `GET /v1/models` answers: the agents the key may use, as OpenAI models. */
export const modelListSchema = z.object({
  object: z.literal("list"),
  data: z.array(
    z.object({
      id: z.string(),
      object: z.literal("model"),
      created: z.number(),
      owned_by: z.string(),
    }),
  ),
});

/** An error answer of the OpenAI-compatible face, in OpenAI's shape. */
export const openAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string(),
  }),
});

/** A message of an AG-UI run's input (only the last user message's text is read). */
const aguiMessageSchema = z.looseObject({
  id: z.string().max(256).optional(),
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
});

/** An answer to an interrupt that ended an earlier AG-UI run. */
const aguiResumeEntrySchema = z.looseObject({
  interruptId: z.string().min(1).max(512).describe("the interrupt's id: the call's approval id"),
  status: z
    .enum(["resolved", "cancelled"])
    .describe("resolved: decided by payload.approved; cancelled: denied"),
  payload: z
    .looseObject({ approved: z.boolean(), reason: z.string().max(2000).optional() })
    .optional()
    .describe("the decision of a resolved interrupt: { approved, reason? }"),
});

/** The body an AG-UI client (`HttpAgent` of `@ag-ui/client`) sends to `POST /v1/agui`: its `RunAgentInput`. */
export const aguiRunInputSchema = z.looseObject({
  threadId: sessionIdSchema.describe("the thread: the session"),
  runId: z
    .string()
    .regex(/^[\x21-\x7e]{1,128}$/, "1–128 printable characters")
    .describe(
      "the client's run id; the same thread and run id again follows the same run from its start (a reconnect)",
    ),
  messages: z
    .array(aguiMessageSchema)
    .max(10_000)
    .describe("the thread; only the last user message is read (the session keeps the rest)"),
  resume: z
    .array(aguiResumeEntrySchema)
    .max(100)
    .optional()
    .describe("answers to the interrupts (calls awaiting approval) that ended the previous run"),
  forwardedProps: z
    .looseObject({ agent: z.string().min(1).max(128).optional() })
    .optional()
    .describe("{ agent }: the agent of a new thread (default: the coordinators' default agent)"),
});

/**
 * The body of `POST /v1/agui/connect`: the `RunAgentInput` of an AG-UI client's `connectAgent`
 * (its messages, tools, state and context are not read: a connect starts nothing).
 */
export const aguiConnectInputSchema = z.looseObject({
  threadId: sessionIdSchema.describe("the thread: the session to re-attach to"),
  runId: z
    .string()
    .regex(/^[\x21-\x7e]{1,128}$/, "1–128 printable characters")
    .describe(
      "a run id this key sent to POST /v1/agui on the thread: that run; another: the thread's latest run",
    ),
});

/**
 * The body an A2A client (`@a2a-js/sdk`'s JSON-RPC transport) sends to `POST /v1/a2a`: a
 * JSON-RPC 2.0 request of A2A v1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`,
 * `CancelTask`, `SubscribeToTask`); its params are checked per method.
 */
export const a2aRequestSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z
    .union([z.string().max(200), z.number(), z.null()])
    .optional()
    .describe("the request's id, echoed in its answer (and in each event of a stream)"),
  method: z.string().min(1).max(100).describe("the A2A method"),
  params: z.record(z.string(), z.unknown()).optional().describe("the method's request"),
});
