/**
 * The zod schemas of the gateway's requests and responses: the same objects validate requests
 * (`http/dispatch.ts`) and make the OpenAPI document (`routes/openapi.ts`).
 */
import { z } from "zod";

/** A session id, as the coordinators accept one. */
export const sessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "1–128 letters, digits, '_', '.', ':' or '-'");

/** A content part of a user message: text or an image (checked in depth by the coordinators' rules). */
const userPartSchema = z.looseObject({ type: z.string() });

/** A run's input: text, or a user message (`{ role: "user", content }`). */
export const userInputSchema = z.union([
  z.string(),
  z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(userPartSchema)]) }),
]);

/** A request's own budget: it lowers, never raises, the agent's. */
export const budgetSchema = z
  .object({
    maxTokens: z.number().positive().optional(),
    maxCostUsd: z.number().positive().optional(),
    maxToolCalls: z.int().positive().optional(),
    maxModelCalls: z.int().positive().optional(),
  })
  .strict();

/** The body of `POST /v1/runs`. */
export const runRequestSchema = z
  .object({
    agent: z.string().min(1).max(128).optional(),
    input: userInputSchema,
    sessionId: sessionIdSchema.optional(),
    followUp: z.boolean().optional(),
    budget: budgetSchema.optional(),
  })
  .strict();

/** The query of `POST /v1/runs`. */
export const runQuerySchema = z.object({ wait: z.enum(["true", "false"]).optional() });

/** What `POST /v1/runs` answers with 202. */
export const runAcceptedSchema = z.object({ runId: z.string(), sessionId: z.string() });

/** A run's usage: tokens, model and tool calls, and its cost with a price table. */
export const usageSchema = z.looseObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  modelCalls: z.number(),
  toolCalls: z.number(),
  costUsd: z.number().optional(),
});

/** A run's answer: the response message, its usage and structured output. */
export const runResultSchema = z.looseObject({
  response: z.looseObject({ role: z.literal("assistant"), content: z.array(z.looseObject({})) }),
  usage: usageSchema.optional(),
  output: z.unknown().optional(),
});

/** What `POST /v1/runs?wait=true` answers with 200: the job's return value. */
export const runAnsweredSchema = runAcceptedSchema.extend(runResultSchema.shape);

/** What `GET /v1/runs/{runId}` answers. */
export const runStatusSchema = z.object({
  runId: z.string(),
  sessionId: z.string(),
  status: z.enum(["waiting", "running", "parked", "completed", "failed"]),
  result: runResultSchema.optional(),
  error: z.string().optional(),
});

/** One session of `GET /v1/sessions`. */
export const sessionSummarySchema = z.object({
  sessionId: z.string(),
  agent: z.string().optional(),
  owner: z.string().optional(),
  lastActivity: z.number().describe("epoch milliseconds"),
  usage: usageSchema,
});

/** The query of `GET /v1/sessions`. */
export const sessionListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  before: z.coerce.number().optional().describe("only sessions active before this (epoch ms)"),
});

/** What `GET /v1/sessions` answers. */
export const sessionListSchema = z.object({ sessions: z.array(sessionSummarySchema) });

/** What `GET /v1/sessions/{id}` answers. */
export const sessionDetailSchema = sessionSummarySchema.extend({
  transcript: z.array(z.looseObject({ role: z.string() })),
});

/** What `POST /v1/sessions/{id}/abort` answers. */
export const abortSchema = z.object({
  aborted: z.boolean(),
  runId: z.string().optional(),
});

/** The query of `GET /v1/sessions/{id}/events`. */
export const eventsQuerySchema = z.object({
  from: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("resume after this event number (as Last-Event-ID)"),
  token: z
    .string()
    .optional()
    .describe(
      "an event-stream token (POST /v1/sessions/{id}/events/token), for EventSource, which sends no headers",
    ),
});

/** What `POST /v1/sessions/{id}/events/token` answers. */
export const streamTokenSchema = z.object({
  token: z.string(),
  expiresInS: z.number().describe("seconds it lives from now; never renewed"),
  url: z.string().describe("the events URL with the token, for new EventSource(url)"),
});

/** A tool call awaiting a decision. */
export const approvalSchema = z.looseObject({
  sessionId: z.string(),
  callKey: z.string().describe("what POST /v1/approvals names as toolCallId"),
  toolCallId: z.string(),
  toolName: z.string(),
  arguments: z.unknown(),
  reason: z.string(),
  runId: z.string(),
  requestedAt: z.number(),
  deadline: z.number().optional(),
});

/** What `GET /v1/approvals` answers. */
export const approvalListSchema = z.object({ approvals: z.array(approvalSchema) });

/** The query of `GET /v1/approvals`. */
export const approvalQuerySchema = z.object({ sessionId: sessionIdSchema.optional() });

/** The body of `POST /v1/approvals`. */
export const decisionRequestSchema = z
  .object({
    sessionId: sessionIdSchema,
    toolCallId: z.string().min(1).max(512),
    approved: z.boolean(),
    reason: z.string().max(2000).optional(),
  })
  .strict();

/** What `POST /v1/approvals` answers. */
export const decisionSchema = z.object({
  sessionId: z.string(),
  toolCallId: z.string(),
  approved: z.boolean(),
  resumed: z.boolean(),
  by: z.string(),
});

/** What `GET /v1/agents` answers. */
export const agentListSchema = z.object({
  agents: z.array(
    z.object({
      name: z.string(),
      model: z.string(),
      tools: z.array(z.string()).optional().describe("absent: every tool"),
      maxTurns: z.number().optional(),
      description: z.string().optional(),
    }),
  ),
});

/** What `GET /v1/limits` answers: each shared provider limit's load, no call's details. */
export const limitListSchema = z.object({
  limits: z.array(
    z.object({
      name: z.string().describe("the limit's name in YIEM_MODEL_LIMITS"),
      requests: z.number().describe("requests sent in the last window"),
      maxRequests: z.number().describe("the limit's requests per window (0: none)"),
      tokens: z.number().describe("their tokens: reported usage, else the reservation"),
      maxTokens: z.number().describe("the limit's tokens per window (0: none)"),
      windowMs: z.number(),
      pausedForMs: z.number().describe("how long a 429's pause still holds every call"),
      waiting: z.number().describe("model calls waiting in the limit's fair line"),
    }),
  ),
});

/** Every error answer. */
export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
});
