import type { ServedAgent } from "../agents/agentRegistry.js";
import type { AgentState } from "../loop/agentState.js";
import type { Logger } from "../ops/logger.js";
import type { CoordinatorRequest, RunAnswer } from "../protocol/coordinatorJob.js";
import type { EventTree } from "../state/eventBus.js";
import type { GuardedWrite } from "../state/pipelinedTranscript.js";
import type { SessionStore } from "../state/sessionStore.js";

export type { WaitingCallRecord } from "./waitingCallRecord.js";

import type {
  AgentEndEvent,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  ExecutedOutcome,
  RunUsage,
  ToolExecutor,
} from "../types/index.js";

/**
 * The seam between the session runner and the intake on one side and the run features
 * (approvals, child runs, handoffs, budgets, and whatever comes next) on the other. The runner
 * and the intake call these hooks knowing no feature by name; a feature imports no other
 * feature and reaches the others only through what the runner hands it here.
 *
 * A feature is built once at the composition root (`coordinator/coordinator.ts` lists them)
 * with its read-only dependencies, then:
 * - `hold` is called each time a coordinator takes a session; what it returns lives as long
 *   as that hold and keeps the feature's per-session state (a handoff's target, a place in a
 *   tree);
 * - `FeatureHold.openRun` is called for each run the hold opens or resumes; what it returns
 *   lives as long as that run;
 * - `intake` is called by the request intake around each request job.
 *
 * Every hook is optional. Hooks run in the order the features are listed.
 */
export interface RunFeature {
  /** Short and stable: it names the feature in logs and in the composition rules doc. */
  readonly name: string;
  /** The feature's part of a new hold on a session. */
  hold?(session: HeldSession): FeatureHold;
  /** The feature's part of the request intake. */
  readonly intake?: FeatureIntake;
}

/** What a feature sees of a session its coordinator holds (read-only but for `state.tools`). */
export interface HeldSession {
  readonly sessionId: string;
  /** The lease's fencing token: every write a feature makes for the session carries it. */
  readonly token: string;
  /** The loop's state: a feature may wrap `state.tools` (in `takeAgent`) to offer its tools. */
  readonly state: AgentState;
  /** The session's current agent (`undefined` on a coordinator that serves no named agents). */
  agent(): ServedAgent | undefined;
  readonly log: Logger;
}

/** The agent a hold took for its session, as a feature may extend it. */
export interface TakenAgent {
  agent: ServedAgent;
  /** The agents it may hand off to, by name, with their descriptions. */
  handoffs?: readonly { name: string; description?: string }[];
  /** The agents it may call. */
  callees?: readonly ServedAgent[];
}

/** A feature's part of one hold. */
export interface FeatureHold {
  /**
   * Called when the hold takes its session's agent (at the hold's start, and after each
   * handoff), after `state.tools` and `state.systemPrompt` were set to the agent's: a feature
   * adds its tools (by wrapping `state.tools`) or reads what it needs of the session. A Redis
   * failure throws `SessionStoreError` (the session is tried again later).
   */
  takeAgent?(taken: TakenAgent): Promise<void>;
  /**
   * Called right after the script that opens the hold's next run (or reports the run in
   * progress) was sent, in the same pass of the event loop: a read sent now goes out in the
   * same round trip, behind it, and sees the run as opened (the inputs it took in). For reads
   * the run's first `FeatureRun.readLimits` would otherwise make once the run is open; the
   * next `openRun` may take them. Never throws.
   */
  runOpening?(): void;
  /** The feature's part of a run being opened or resumed. */
  openRun?(run: OpenedRun): Promise<FeatureRun | undefined>;
  /**
   * The hold ended, however: its session idle (its lease released), its run parked, its lease
   * lost or handed over, or a Redis failure under it (to be tried again). Called once, after
   * every run of the hold. Not awaited; never throws.
   */
  released?(): void;
}

/** The run being opened or resumed, as features see it. */
export interface OpenedRun {
  readonly runId: string;
  readonly kind: "new" | "resume";
  /** A new run that took an abort mark as it opened (a child run whose tree was aborted). */
  readonly abortedAtOpen: boolean;
  /** The requests the run answers so far (it grows as the run takes in follow-ups). */
  readonly requestIds: readonly string[];
  /** Where the run's messages begin in `state.messages`. */
  readonly runStart: number;
  /** What the run has used so far (a resumed run's earlier part included). */
  usage(): RunUsage;
  /** What is left of the run's budget now (`undefined`: no limit). */
  remainingBudget(): AgentLoopConfig["budget"];
  /**
   * The root of the run's tree of agents: its session and the root run (the run itself for a
   * root). Read once every feature's part is open (a feature such as child runs says it).
   */
  treeRoot(): TreeRoot;
  /**
   * Reserves what the run is about to use from what it shares with others (`FeatureRun.reserve`
   * of every feature): the reason it may not, or `undefined` once reserved.
   */
  reserve(what: Reservation): Promise<string | undefined>;
  /** The session store (aborts recorded while no one held a session). */
  readonly store: SessionStore;
  /**
   * Makes the run go on as the session's agent now recorded (after a handoff was stored):
   * every feature takes the agent again and the loop takes the new model call and config.
   */
  switchAgent(): Promise<void>;
}

/** The root of a tree of agents: its session, and the run of it the tree belongs to. */
export interface TreeRoot {
  sessionId: string;
  runId: string;
}

/** What a run reserves before it uses it: a model call, or the start of a child run (in its session). */
export type Reservation = { kind: "modelCall" } | { kind: "childRun"; childSessionId: string };

/**
 * A call that waits for something outside its run (a person's decision, a child run's answer)
 * before it has an outcome. The approvals feature parks a batch that has such calls; other
 * features offer theirs through `FeatureRun.callWaits`.
 */
export interface CallWait {
  /** Whether this wait handles the call (its tool is one of the feature's). */
  claims(call: WaitingCall): boolean;
  /**
   * What the call's decision (recorded under its key, `undefined` when none yet) makes of it:
   * `waiting` (the batch parks), `run` (the call runs, its outcome decorated by `decorate`),
   * or `answered` (this outcome, without running it). Throws when Redis fails: the call then
   * waits.
   */
  settle(call: WaitingCall, decision: WaitDecision | undefined): Promise<WaitSettlement>;
}

/** A call of the batch, with its key (stable across resumes) and its arguments. */
export interface WaitingCall {
  key: string;
  toolCallId: string;
  toolName: string;
  /** The tool called (a feature tells its own tools by what they are, never by their name). */
  tool: AgentTool;
  args: Record<string, unknown>;
  /** The tool's approval request, when the call needs one. */
  approval?: { reason?: string };
  approvalTimeoutMs?: number;
  /** Publishes an event of the run. */
  emit(event: AgentEvent): Promise<void>;
}

/** A recorded decision on a waiting call. */
export interface WaitDecision {
  approved: boolean;
  by?: string;
  reason?: string;
  decidedAt: number;
  /** The outcome a child run's answer delivered. */
  outcome?: ExecutedOutcome;
}

/** What a `CallWait` made of a call. */
export type WaitSettlement =
  | { kind: "waiting" }
  | { kind: "run"; decided: boolean; decorate?: (outcome: ExecutedOutcome) => ExecutedOutcome }
  | { kind: "answered"; decided: boolean; outcome: ExecutedOutcome };

/** A feature's part of one run. Every hook is optional. */
export interface FeatureRun {
  /** Whether the run is to be aborted before it starts (its tree was aborted meanwhile). */
  abortedAtOpen?(): Promise<boolean>;
  /** Where the run's events are seen too (a child's root): the first feature's wins. */
  readonly eventTree?: EventTree;
  /** The root of the run's tree, when this feature knows it (child runs): the first feature's wins. */
  readonly treeRoot?: TreeRoot;
  /**
   * Reserves `what` from a budget the run shares (a tree's ledger): the reason it may not (the
   * first feature's refusal wins), or `undefined`. Throws `SessionStoreError` on a Redis failure.
   */
  reserve?(what: Reservation): Promise<string | undefined>;
  /** Calls of this run that wait outside it (see `CallWait`). */
  readonly callWaits?: readonly CallWait[];
  /**
   * Wraps the run's tool executor (`waits`: every feature's `callWaits`). Wrappers nest in
   * the order the features are listed, the first outermost.
   */
  wrapExecutor?(inner: ToolExecutor, waits: readonly CallWait[]): ToolExecutor;
  /** Whether the run keeps `event` back instead of publishing it (a parked call's placeholder end). */
  holdsBack?(event: AgentEvent): boolean;
  /**
   * Lowers `config`'s limits for the requests `requestIds` (at the run's open, after a switch of
   * agent, and for each input it takes in later). Throws `SessionStoreError` on a Redis failure.
   */
  limitConfig?(config: AgentLoopConfig, requestIds: readonly string[]): Promise<void>;
  /**
   * Starts the reads the next `limitConfig` for `requestIds` needs, without waiting for them:
   * called on every feature before their `limitConfig`s run one after another, so that their
   * reads go out together (one round trip at a run's open, not one per feature). Never throws;
   * a read that fails fails that `limitConfig`.
   */
  readLimits?(requestIds: readonly string[]): void;
  /**
   * Before a batch's results are appended (after earlier writes settled): may stop the run
   * (throw `RunParkedError`), or return the write that stores the batch instead of a plain
   * append and what to do once it is stored. The first feature that returns a write wins.
   */
  beforeAppend?(messages: AgentMessage[]): Promise<BatchPlan | undefined>;
  /** After a batch's results were appended (or queued behind earlier writes). */
  afterAppend?(settle: () => Promise<void>): Promise<void>;
  /** Before the run's response is stored (its last step that may still write). */
  beforeFinish?(): Promise<void>;
  /** After the run's response is stored, with its `agentEnd`. Best effort. */
  afterFinish?(run: FinishedRun): Promise<void>;
}

/** How a feature stores a batch instead of the plain append. */
export interface BatchPlan {
  /** Stores the batch, fenced by the lease and guarded by the transcript's expected length. */
  write: GuardedWrite<boolean>;
  /** After the batch is stored and in `state.messages`. */
  after?: () => Promise<void>;
}

/** A finished run, as features see it. */
export interface FinishedRun {
  runId: string;
  /** The requests the run answered (named as `agentEnd`'s `inputIds`, which it becomes). */
  inputIds: string[];
  event: AgentEndEvent;
}

/** A feature's part of the request intake (the coordinator queue's jobs). */
export interface FeatureIntake {
  /**
   * Why a coordinator-queue job does not belong there (a decision, which travels on its own
   * queue), or `undefined`. A refused job fails at once, unrecoverably, with this error.
   */
  refuses?(data: unknown): Error | undefined;
  /**
   * Whether a valid request may be taken in at all, checked before anything is written for it
   * (its session's agent, its input, any mark): `undefined` when it may, else the error it is
   * refused with (the job fails at once, unrecoverably). Throws on a Redis failure: the job is
   * then left to come back after its lock. Never writes.
   */
  admits?(request: CoordinatorRequest): Promise<Error | undefined>;
  /**
   * How long (ms) a valid request of `sessionId` is to wait in the queue before it is tried
   * again, or `undefined` when it may be taken in now. Called after `admits` and once its
   * session's agent is known, before its input is recorded; the first feature's wait wins. A
   * request that waits goes back to the queue as a delayed job, its attempts kept. Throws on
   * a Redis failure: the job is then left to come back after its lock.
   */
  defers?(sessionId: string, request: CoordinatorRequest): Promise<number | undefined>;
  /**
   * Before a request's input is recorded in its session (retried with it on a Redis failure,
   * so it must be idempotent). Throws on a Redis failure.
   */
  beforeRecord?(sessionId: string, request: CoordinatorRequest): Promise<void>;
  /** A request was answered (before its job completes). Throws on a Redis failure: it is retried. */
  answered?(held: AnsweredRequest): Promise<void>;
  /**
   * Whether `answered` has work for `request` (absent: whenever `answered` is defined). A
   * request no feature takes the answer of completes right behind its run's close.
   */
  takesAnswer?(request: AnsweredRequest["request"]): boolean;
  /** A request was refused (invalid, or its agent unknown) before it was recorded. Never throws. */
  refused?(data: unknown, reason: string): Promise<void>;
  /**
   * A request job was taken from the queue, valid or not: `first` on its first delivery (not
   * one after a coordinator died or handed it back), `priority` its BullMQ priority (0: none).
   * Not awaited; never throws.
   */
  taken?(data: unknown, delivery: { first: boolean; priority: number }): void;
}

/** An answered request, as the intake holds it. */
export interface AnsweredRequest {
  sessionId: string;
  agent: string;
  request: Pick<CoordinatorRequest, "parent">;
  answer: RunAnswer;
}
