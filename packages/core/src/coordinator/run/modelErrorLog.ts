import { readLlmErrorStatus, redactSecrets } from "../../llm/describeLlmError.js";
import type { Logger } from "../../ops/logger.js";
import type { LlmCall } from "../../types/index.js";

/** The longest reason a `model call failed` line carries. */
const MAX_REASON_LENGTH = 500;

/** The run a wrapped call belongs to, for its log lines. */
export interface ModelCallOrigin {
  sessionId: string;
  runId: string;
  /** The agent whose model it is. */
  agent?: string;
}

/**
 * Wraps `llmCall` so that every answer with `stopReason: "error"` is logged at warn as
 * `model call failed`, with `sessionId`, `runId`, the HTTP `status` when there was one and the
 * `errorMessage` as `reason` (one line, at most 500 characters, `Bearer` tokens redacted on
 * top of the redaction the adapter did: `createOpenAILlmCall` never puts its key there).
 * Returns the answer unchanged; never logs aborted or successful calls, never throws more
 * than `llmCall` does.
 */
export function logModelErrors(llmCall: LlmCall, log: Logger, origin: ModelCallOrigin): LlmCall {
  return async (...args) => {
    const response = await llmCall(...args);
    if (response.stopReason !== "error") return response;
    const description = response.errorMessage ?? "no error message";
    const reason = redactSecrets(description.split("\n")[0] ?? "", []).slice(0, MAX_REASON_LENGTH);
    const status = readLlmErrorStatus(description);
    log.warn({ ...origin, status, model: response.model, reason }, "model call failed");
    return response;
  };
}
