import type { Queue } from "bullmq";
import type { ServedAgent } from "../../agents/agentRegistry.js";
import type { FeatureHold, RunFeature } from "../../features/runFeature.js";
import type { AgentState } from "../../loop/agentState.js";
import type { RunHandoff } from "../../loop/runAgentLoop.js";
import type { Logger } from "../../ops/logger.js";
import type { RunAnswer } from "../../protocol/coordinatorJob.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { StreamCaps } from "../../state/eventBus.js";
import type { SessionStore } from "../../state/sessionStore.js";
import type { ToolStore } from "../../tools/toolStore.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, LlmCall } from "../../types/index.js";
import type { Slot } from "../intake/runSlots.js";
import type { LeaseKeeper } from "./leaseKeeper.js";
import type { ResultWaiter } from "./resultWaiter.js";
import type { SessionAgent } from "./sessionAgent.js";
import type { WorkerOnlyTool } from "./toolPlacement.js";

/**
 * What the coordinator lends every session it runs: built once at start-up, read-only after.
 * Run features (approvals, child runs, handoffs, budgets) come in `features`; the runner knows
 * none of them by name.
 */
export interface SessionRunnerDeps {
  store: SessionStore;
  command: RedisClient;
  keys: ClusterKeys;
  /** How the session's replay stream is capped (the events the runs publish). */
  streamCaps?: StreamCaps;
  leaseMs: number;
  llmCall: LlmCall;
  toolStore: ToolStore;
  systemPrompt: string;
  /** How runs behave (the coordinator's options); each run adds its own executor. */
  config: Omit<AgentLoopConfig, "executor">;
  queueFor: (queue: string | undefined, sessionId: string) => Promise<Queue>;
  waiter: ResultWaiter;
  /** Seconds a completed tool job stays in its queue (`YIEM_TOOL_JOB_RETENTION_S`); default `DEFAULTS.toolJobRetentionS`. */
  toolJobRetentionS?: number;
  log: Logger;
  /** The run features, in the order their hooks run (see `RunFeature`). */
  features: readonly RunFeature[];
  /** Sees every event the coordinator publishes (metrics). */
  observe?: (event: AgentEvent) => void;
  /** Picks up tools written elsewhere (writeTool); called before every LLM call. */
  syncWrittenTools?: () => Promise<unknown>;
  /** Says which tools are worker-only (announced by workers; see `placeToolCall`). */
  workerOnly: (tool: AgentTool) => WorkerOnlyTool | undefined;
  /**
   * The agent of a session (its prompt, model call, tools, turn cap). Without it, every
   * session runs with `systemPrompt`, `llmCall` and every tool of `toolStore`.
   */
  agentOf?: (sessionId: string, known?: string) => Promise<SessionAgent>;
  /** Told each time a run's response is stored, with the inputs it answers. */
  onRunFinished: (sessionId: string, requestIds: string[], answer: RunAnswer) => void;
  /**
   * Told right before a run's close is sent, with the inputs it answers; the function it
   * returns is called once the close is done (after `onRunFinished` when it stored them).
   */
  onRunClosing?: (requestIds: readonly string[]) => () => void;
  /**
   * Told right after a run's close is sent on the command connection, before its reply, with
   * the inputs it answers and the answer it stores (and its text as stored, `runAnswerText`):
   * a command sent behind it runs after it. Told again for each attempt (a close refused for
   * a stale length is sent again).
   */
  onRunCloseSent?: (requestIds: readonly string[], answer: RunAnswer, answerText: string) => void;
}

/** How the coordinator aborts or hands over the current run of a session it holds. */
export interface SessionControl {
  controller: AbortController | undefined;
  handOver(): Promise<void>;
}

/** This coordinator's hold on a session: its lease and token, the transcript as the loop sees it. */
export interface SessionHold {
  /** Calls a previous holder was running in its own process when it stopped. */
  interrupted: Set<string>;
  deps: SessionRunnerDeps;
  sessionId: string;
  token: string;
  lease: LeaseKeeper;
  state: AgentState;
  handedOver: boolean;
  /** Registered with the session tasks, for aborts and hand-over. */
  control: SessionControl;
  /** The agent the session belongs to (`SessionRunnerDeps.agentOf`); a handoff changes it. */
  agent?: ServedAgent;
  /** Each feature's part of this hold, in the features' order. */
  features: FeatureHold[];
  /** How the run goes on after its last batch handed it over, until the loop takes it. */
  nextLeg?: RunHandoff;
  /** The run slot the hold works in: lent while a model call waits at a shared limit. */
  slot?: Slot;
}
