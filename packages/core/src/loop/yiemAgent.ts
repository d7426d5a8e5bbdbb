import { formatMsgForLLM as defaultFormatMsgForLLM } from "../llm/formatMsgForLLM.js";
import { createOpenAILlmCall } from "../llm/openaiLlmCall.js";
import { SETTINGS } from "../settings/catalogue.js";
import type { ToolStore } from "../tools/toolStore.js";
import type {
  AgentContext,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AssistantMessage,
  EmitFn,
  LlmCall,
  LlmRequest,
  UserInput,
  UserMessage,
} from "../types/index.js";
import type { AgentState } from "./agentState.js";
import { InputQueue, type QueuedInput } from "./inputQueue.js";
import { resolveOutputSpec } from "./outputSpec.js";
import { prepareContext as defaultPrepareContext } from "./prepareContext.js";
import { ResponseQueue } from "./responseQueue.js";
import { runAgentLoop } from "./runAgentLoop.js";
import { toUserMessage } from "./toUserMessage.js";

/**
 * Options of `YiemAgent` (the YiemAgent lifecycle's constructor, plus `executor`, `maxTurns`
 * and `limits`). The options are the loop's configuration too: the agent hands this object
 * as is to every run (`AgentLoopConfig`: hooks, `toolExecution`, `executor`, `maxTurns`,
 * `limits`).
 */
export interface YiemAgentOptions extends AgentLoopConfig {
  systemPrompt?: string;
  /** The model name; with no `llmCall`, an OpenAI-compatible call is made for it. */
  model?: string;
  /** The tools (copied). When absent, the `toolStore`'s live map is used. */
  tools?: Map<string, AgentTool> | readonly AgentTool[];
  messages?: AgentMessage[];
  llmCall?: LlmCall;
  agentEventSink?: EmitFn;
  toolStore?: ToolStore;
  prepareContext?: (state: AgentState) => AgentContext;
  formatMsgForLLM?: (context: AgentContext) => LlmRequest;
  sessionId?: string;
  maxRetryDelayMs?: number;
}

function initialTools(options: YiemAgentOptions): Map<string, AgentTool> {
  if (options.tools instanceof Map) return new Map(options.tools);
  if (options.tools) return new Map(options.tools.map((tool) => [tool.name, tool]));
  return options.toolStore ? options.toolStore.tools : new Map();
}

function resolveLlmCall(options: YiemAgentOptions): LlmCall {
  if (options.llmCall) return options.llmCall;
  if (options.model) {
    return createOpenAILlmCall({ model: options.model, maxRetryDelayMs: options.maxRetryDelayMs });
  }
  throw new TypeError("YiemAgent needs an llmCall, or a model to call through OPENAI_BASE_URL");
}

/**
 * An agent that runs the tool loop in this process (lifecycle §5).
 *
 * `run(msg)` starts a run when idle; on a busy agent the message joins the current run before
 * its next LLM call. `followUp(msg)` on a busy agent becomes the next run, with its own
 * response. Every run yields exactly one response, in order, on `takeResponse()`; with an
 * `outputSchema`, a run whose final answer matched it has the parsed JSON as `output`.
 *
 * @example
 * const agent = new YiemAgent({ llmCall, tools: [getTime] });
 * agent.run("What time is it in Tokyo?");
 * const answer = await agent.takeResponse();
 */
export class YiemAgent {
  readonly state: AgentState;
  readonly sessionId: string | undefined;
  readonly toolStore: ToolStore | undefined;
  private readonly options: YiemAgentOptions;
  private readonly llmCall: LlmCall;
  private readonly inbox = new InputQueue();
  private readonly responses = new ResponseQueue();
  private controller: AbortController | undefined;
  private pumping: Promise<void> | undefined;
  private closed = false;

  constructor(options: YiemAgentOptions) {
    resolveOutputSpec(options); // a malformed output option fails here, not in every run
    this.options = options;
    this.llmCall = resolveLlmCall(options);
    this.sessionId = options.sessionId;
    this.toolStore = options.toolStore;
    this.state = {
      systemPrompt: options.systemPrompt ?? SETTINGS.systemPrompt.default,
      model: options.model,
      tools: initialTools(options),
      messages: [...(options.messages ?? [])],
      pendingToolCalls: new Set(),
      activeRun: false,
    };
  }

  /** Sends input: starts a run when idle, joins the current run when busy. Throws on unreadable input. */
  run(message: UserInput): void {
    this.enqueue({ kind: "input", message: toUserMessage(message) });
  }

  /** Sends a follow-up: the next run after the current one (a new run when idle). */
  followUp(message: UserInput): void {
    this.enqueue({ kind: "followUp", message: toUserMessage(message) });
  }

  /** The next final response, in run order. Rejects with `AgentShutdownError` after `shutdown()`. */
  takeResponse(): Promise<AssistantMessage> {
    return this.responses.take();
  }

  /** Aborts the current run: running tools see their signal fire; the run ends "aborted". */
  abort(): void {
    this.controller?.abort();
  }

  /** Stops the agent: drops queued input, aborts the current run, waits for it to end. */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.inbox.clear();
    this.abort();
    await this.pumping;
    this.responses.close();
  }

  private enqueue(entry: QueuedInput): void {
    if (this.closed) throw new Error("the agent was shut down");
    this.inbox.push(entry);
    if (this.pumping) return;
    this.pumping = this.pump();
  }

  /**
   * Runs queued runs one after another until the inbox is empty. The emptiness check and the
   * reset of `pumping` happen in the same tick, so input sent meanwhile is never stranded.
   */
  private async pump(): Promise<void> {
    await Promise.resolve(); // let the caller finish queuing what it sends in the same tick
    for (;;) {
      const first = this.closed ? undefined : this.inbox.takeNextRunStart();
      if (!first) {
        this.pumping = undefined;
        return;
      }
      this.responses.deliver(await this.runOnce(first));
    }
  }

  private runOnce(first: UserMessage): Promise<AssistantMessage> {
    const controller = new AbortController();
    this.controller = controller;
    let opening: UserMessage[] = [first];
    const { options } = this;
    return runAgentLoop({
      state: this.state,
      llmCall: this.llmCall,
      prepareContext: options.prepareContext ?? defaultPrepareContext,
      formatMsgForLLM: options.formatMsgForLLM ?? defaultFormatMsgForLLM,
      config: options,
      emit: options.agentEventSink ?? (() => {}),
      signal: controller.signal,
      drainInput: () => {
        const drained = [...opening, ...this.inbox.drainInputs()];
        opening = [];
        this.state.messages.push(...drained);
        return drained;
      },
    }).finally(() => {
      if (this.controller === controller) this.controller = undefined;
    });
  }
}

/** Seed-style: sends input to the agent (`agent.run`). */
export function runAgent(agent: YiemAgent, message: UserInput): void {
  agent.run(message);
}

/** Seed-style: sends a follow-up (`agent.followUp`). */
export function followUp(agent: YiemAgent, message: UserInput): void {
  agent.followUp(message);
}

/** Seed-style: the next final response (`agent.takeResponse`). */
export function takeResponse(agent: YiemAgent): Promise<AssistantMessage> {
  return agent.takeResponse();
}
