import type { z } from "zod";
import { GatewayError } from "../http/gatewayError.js";
import type { responseCreateRequestSchema } from "../responseSchemas.js";
import type { RunRequest } from "./runs.js";

/** The body of `POST /v1/responses`. */
export type ResponseCreateRequest = z.infer<typeof responseCreateRequestSchema>;

/** A part of a Responses input message. */
type InputPart = { type: string } & Record<string, unknown>;

/**
 * The run's input from a Responses request: its `input` string, or the last user message of
 * its items (its text, or its `input_text` and `input_image` parts as the chat parts the
 * coordinators read); the session keeps the conversation, so earlier items are not read. Items
 * the face cannot take (a `function_call_output`: the agent's tools run on the cluster; an
 * `mcp_approval_response`: decide with `POST /v1/approvals`) are a 400 naming `input`.
 */
export function runInputOf(body: ResponseCreateRequest): RunRequest["input"] {
  if (typeof body.input === "string") return body.input;
  const refused = body.input.find(
    (item) => item.type !== undefined && item.type !== "message" && item.role !== "user",
  );
  if (refused) {
    throw invalidInput(
      `items of type ${String(refused.type)} are not taken: the agent's tools run on the cluster, and calls awaiting approval are decided with POST /v1/approvals`,
    );
  }
  const last = body.input.findLast((item) => item.role === "user");
  const content = last?.content;
  if (typeof content === "string" && content !== "") return content;
  if (Array.isArray(content) && content.length > 0) {
    return { role: "user", content: content.map(chatPartOf) };
  }
  throw invalidInput("needs a string, or a user message with content");
}

/** A Responses input part as the chat part the coordinators read. */
function chatPartOf(part: InputPart): { type: "text"; text: string } | ChatImagePart {
  if (part.type === "input_text" && typeof part.text === "string") {
    return { type: "text", text: part.text };
  }
  if (part.type === "input_image" && typeof part.image_url === "string") {
    return { type: "image_url", image_url: { url: part.image_url } };
  }
  throw invalidInput(
    `parts of type ${part.type} are not taken (input_text, input_image with image_url)`,
  );
}

type ChatImagePart = { type: "image_url"; image_url: { url: string } };

function invalidInput(message: string): GatewayError {
  return new GatewayError(400, "invalid_request", `input: ${message}`, "input");
}
