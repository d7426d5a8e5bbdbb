/**
 * The zod schemas of the Open Responses face (`POST /v1/responses`, `GET
 * /v1/responses/{id}`, `POST /v1/responses/{id}/cancel`): OpenAI's Responses API as the
 * `openai` SDK speaks it. As in `schemas.ts`, they validate requests and make the OpenAPI
 * document.
 */
import { z } from "zod";
import { awaitingApprovalSchema } from "./faceSchemas.js";

/** An item of a request's `input`: a message (its text, or its parts), or another item. */
const inputItemSchema = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
});

/** The body of `POST /v1/responses` (other OpenAI fields are accepted and ignored). */
export const responseCreateRequestSchema = z.looseObject({
  model: z
    .string()
    .min(1)
    .max(128)
    .nullish()
    .describe(
      "the agent's name for a new session (default: the coordinators' default agent); a response continuing another (previous_response_id) is answered by its session's current agent",
    ),
  input: z
    .union([z.string().min(1), z.array(inputItemSchema).min(1).max(10_000)])
    .describe(
      "the run's input: a string, or items of which only the last user message is read (the session keeps the conversation)",
    ),
  instructions: z
    .string()
    .nullish()
    .describe("ignored: the agent's own instructions are its system prompt"),
  previous_response_id: z
    .string()
    .max(200)
    .nullish()
    .describe("continue the session of this response (one of the key's)"),
  stream: z.boolean().nullish(),
  background: z
    .boolean()
    .nullish()
    .describe("answer at once (status queued or in_progress); the run goes on"),
});

/** The query of `GET /v1/responses/{id}`. */
export const responseRetrieveQuerySchema = z.object({
  stream: z
    .enum(["true", "false"])
    .optional()
    .describe("stream the response's events (from the start, or after starting_after)"),
  starting_after: z.coerce
    .number()
    .int()
    .min(-1)
    .optional()
    .describe("with stream: resume after the event with this sequence_number"),
});

/** A Responses output item: a message, a function call, its output, an approval request. */
const outputItemSchema = z.looseObject({ type: z.string(), id: z.string() });

/** What the face answers: an OpenAI `response` object, rebuilt from the run's events. */
export const responseObjectSchema = z.looseObject({
  id: z.string().describe("resp_<runId>"),
  object: z.literal("response"),
  created_at: z.number(),
  status: z.enum(["queued", "in_progress", "completed", "failed", "cancelled", "incomplete"]),
  model: z.string().describe("the agent that answers"),
  output: z.array(outputItemSchema),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z
    .looseObject({ reason: z.string() })
    .nullable()
    .describe("reason awaiting_approval while the run waits for a person's decision"),
  usage: z
    .looseObject({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() })
    .nullable(),
  yiem: awaitingApprovalSchema
    .optional()
    .describe("set while the run waits for a person's decision: the calls and how to decide them"),
});
