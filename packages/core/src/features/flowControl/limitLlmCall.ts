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
import type { LimitLabels, ProviderLimitObserver } from "./limitObserver.js";
import { type ModelCaller, modelCallId } from "./modelCallIds.js";
import type { CallTenant, ProviderLimit } from "./providerLimit.js";
import { type Turn, waitForTurn } from "./waitForTurn.js";

/** The pause of a 429 that names no wait. */
const DEFAULT_PAUSE_MS = 1000;

/** The longest pause a 429 sets, unless the limit's window is longer. */
const MAX_PAUSE_MS = 60_000;

/** What `limitLlmCall` may be told beyond the call, its limit and its log. */
export interface LimitLlmCallOptions {
  /** Who makes the calls: named in each call's id in Redis (`modelCallId`). Default: nobody. */
  caller?: ModelCaller;
  /** Told each wait, 429 and admitted call (the coordinator's metrics). Default: none. */
  observer?: ProviderLimitObserver;
  /** Tenants' settings (`YIEM_TENANTS`): a tenant's `share` of the line. Default: share 1 each. */
  tenants?: Tenants;
}

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
 * A call whose turn came at once (no wait, so never confirmed) is counted from its answer on
 * (`ProviderLimit.settle`'s `fromNow`): sent in a burst, it may reach the provider late.
 * `options.observer` is told each request's wait, each 429 and each answer's tokens;
 * `options.caller` names who waits in Redis (`readProviderLimits`). A request that has to wait
 * for its turn tells the call's `LlmCallOptions.onGateWait` (the coordinator lends the run's
 * slot meanwhile).
 *
 * Never changes the request nor the answer, and never retries on its own.
 */
export function limitLlmCall(
  llmCall: LlmCall,
  limit: ProviderLimit,
  log: Logger,
  options: LimitLlmCallOptions = {},
): LlmCall {
  return async (request, signal, callOptions) => {
    const name = callOptions?.tenant;
    const share = name === undefined ? 1 : (settingsOfTenant(options.tenants, name).share ?? 1);
    const tenant = name === undefined ? undefined : { name, share };
    const call = new LimitedCall(
      limit,
      request,
      signal,
      log,
      options,
      tenant,
      callOptions?.onGateWait,
    );
    await call.take();
    const answer = await llmCall(request, signal, call.hooks(callOptions));
    await call.finish(answer);
    return answer;
  };
}

/** One call under a limit: the turn of its current request. */
class LimitedCall {
  private turn: Turn | undefined;
  /** The tokens the current turn holds: its reservation, 0 once the server refused it. */
  private held = 0;
  private readonly tokens: number;
  private readonly labels: LimitLabels;

  constructor(
    private readonly limit: ProviderLimit,
    request: LlmRequest,
    private readonly signal: AbortSignal | undefined,
    private readonly log: Logger,
    private readonly options: LimitLlmCallOptions,
    private readonly tenant: CallTenant | undefined,
    /** Told when a request of the call has to wait for its turn (`LlmCallOptions.onGateWait`). */
    private readonly onWait: (() => () => void) | undefined,
  ) {
    this.tokens = estimateInputTokens(request) + limit.limit.outputTokens;
    this.labels = { limit: limit.limit.name, ...(tenant ? { tenant: tenant.name } : {}) };
  }

  /** Waits for the turn of the next request (the call's own hooks first run after it). */
  async take(): Promise<void> {
    const { caller, observer } = this.options;
    const callId = caller ? modelCallId(caller) : undefined;
    const startedAt = performance.now();
    observer?.waitStarted(this.labels);
    try {
      this.turn = await waitForTurn(
        this.limit,
        this.tokens,
        this.signal,
        this.tenant,
        callId,
        this.onWait,
      );
      this.held = this.turn ? this.tokens : 0;
    } catch (err) {
      this.turn = undefined;
      this.warn(err);
    } finally {
      observer?.waitEnded(this.labels, (performance.now() - startedAt) / 1000);
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
    if (!this.turn) return;
    this.options.observer?.admitted(this.labels, total ?? this.held);
    if (total === undefined) return;
    const { callId, atOnce } = this.turn;
    await this.limit.settle(callId, total, atOnce).catch((err) => this.warn(err));
  }

  private async failed(failure: LlmRequestFailure): Promise<void> {
    if (!this.turn || failure.status === undefined) return; // no answer: tokens may be spent
    this.held = 0;
    if (failure.status === 429) this.options.observer?.refused(this.labels);
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
