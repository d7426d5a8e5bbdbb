import type { Logger } from "../../ops/logger.js";
import { settingsOfTenant, type Tenants } from "../../settings/tenantSettings.js";
import type {
  AssistantMessage,
  LlmCall,
  LlmCallOptions,
  LlmRequest,
  LlmRequestFailure,
} from "../../types/index.js";
import { estimateInputTokens } from "./estimateTokens.js";
import type { CallTenant, ProviderLimit } from "./providerLimit.js";
import { type Turn, waitForTurn } from "./waitForTurn.js";

/** The pause of a 429 that names no wait. */
const DEFAULT_PAUSE_MS = 1000;

/** The longest pause a 429 sets, unless the limit's window is longer. */
const MAX_PAUSE_MS = 60_000;

/**
 * Wraps `llmCall` so that every request it sends waits for its turn under a shared provider
 * limit (`ProviderLimit`, in Redis, across every coordinator): before the call (and before
 * each retry the adapter makes, through `LlmCallOptions.beforeRequest`) it reserves one
 * request and the request's estimated tokens (`estimateInputTokens` + the limit's
 * `outputTokens`), then corrects them by the answer's reported usage. A request the server
 * refused reserves no tokens; a 429 pauses every coordinator's calls under the limit for the
 * wait the server asked for (`retry-after`, `x-ratelimit-reset-*`; 1 s when it names none; at
 * most a minute, or the limit's window when longer). An abort of `signal` ends the wait at once (the call then answers
 * `aborted`). Redis failing never fails the call: it is sent unlimited and `log` warns. Calls
 * wait in their tenant's line (`LlmCallOptions.tenant`, weighted by its `share` in `tenants`):
 * waiting tenants are served in turn.
 *
 * Never changes the request nor the answer, and never retries on its own.
 */
export function limitLlmCall(
  llmCall: LlmCall,
  limit: ProviderLimit,
  log: Logger,
  tenants?: Tenants,
): LlmCall {
  return async (request, signal, options) => {
    const name = options?.tenant;
    const share = name === undefined ? 1 : (settingsOfTenant(tenants, name).share ?? 1);
    const tenant = name === undefined ? undefined : { name, share };
    const call = new LimitedCall(limit, request, signal, log, tenant);
    await call.take();
    const answer = await llmCall(request, signal, call.hooks(options));
    await call.finish(answer);
    return answer;
  };
}

/** One call under a limit: the turn of its current request. */
class LimitedCall {
  private turn: Turn | undefined;
  private readonly tokens: number;

  constructor(
    private readonly limit: ProviderLimit,
    request: LlmRequest,
    private readonly signal: AbortSignal | undefined,
    private readonly log: Logger,
    private readonly tenant: CallTenant | undefined,
  ) {
    this.tokens = estimateInputTokens(request) + limit.limit.outputTokens;
  }

  /** Waits for the turn of the next request (the call's own hooks first run after it). */
  async take(): Promise<void> {
    try {
      this.turn = await waitForTurn(this.limit, this.tokens, this.signal, this.tenant);
    } catch (err) {
      this.turn = undefined;
      this.warn(err);
    }
  }

  /** The caller's options with this limit's hooks before theirs. */
  hooks(options: LlmCallOptions | undefined): LlmCallOptions {
    return {
      ...options,
      beforeRequest: async (attempt) => {
        if (attempt > 0) await this.take(); // the first request's turn was taken already
        await options?.beforeRequest?.(attempt);
      },
      onRequestFailed: async (failure) => {
        await this.failed(failure);
        await options?.onRequestFailed?.(failure);
      },
    };
  }

  /** Corrects the last request's tokens by the answer's usage. */
  async finish(answer: AssistantMessage): Promise<void> {
    const total = answer.usage?.totalTokens;
    if (!this.turn || total === undefined) return;
    await this.limit.settle(this.turn.callId, total).catch((err) => this.warn(err));
  }

  private async failed(failure: LlmRequestFailure): Promise<void> {
    if (!this.turn || failure.status === undefined) return; // no answer: tokens may be spent
    const longest = Math.max(this.limit.limit.windowMs, MAX_PAUSE_MS);
    const pauseMs =
      failure.status === 429 ? Math.min(failure.retryAfterMs ?? DEFAULT_PAUSE_MS, longest) : 0;
    if (pauseMs > 0)
      this.log.warn(
        { limit: this.limit.limit.name, pauseMs },
        "model server answered 429: every coordinator's calls under this limit pause",
      );
    await this.limit.refused(this.turn.callId, pauseMs).catch((err) => this.warn(err));
  }

  private warn(err: unknown): void {
    this.log.warn(
      { limit: this.limit.limit.name, err: (err as Error).message },
      "provider limit unavailable: the model call goes unlimited",
    );
  }
}
