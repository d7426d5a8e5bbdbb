/** The types of the `flow` scenario, shared by its phases (`flow.ts`, `flowTenants.ts`). */
import type { FlowPlan } from "../plan.js";
import type { SessionsCluster } from "../setup/sessionsCluster.js";

/** The `flow` scenario's figures (`bench/results.json` `flow`). */
export interface Flow {
  date: string;
  plan: FlowPlan;
  /** Share of the provider's token limit used while loaded (%). Target ≥ 90. */
  flowLimitUsedPct: number;
  /** Model requests the provider answered 429 (%). Target ≤ 1. */
  flow429Pct: number;
  /** Runs that did not end with their answer. Target 0. */
  flowRunsFailed: number;
  /** The small tenant's answer time under a flood ÷ its unloaded time plus one model call (target ≤ 2). */
  flowSmallTenantRatio?: number;
  /** The small tenant's medians (ms) and the flood's size behind `flowSmallTenantRatio`. */
  tenantDetail?: {
    unloadedMs: number;
    loadedMs: number;
    flood: number;
    /** Medians under the flood: when the run started, when its two model calls ended (ms after the send). */
    loadedStartedMs?: number;
    loadedModelCallsEndedMs?: number[];
    /** Under the flood: the mean wait of its model calls for their turn at the limit (ms). */
    loadedTurnWaitMs?: number;
  };
  /** The overrun of a tenant's budget per day, in model calls beyond it (target 0). */
  flowBudgetOverrun?: number;
  /** The model calls the capped tenant's runs made (its budget: `plan.budgetCalls`). */
  budgetCallsMade?: number;
  /** What the figures were read from. */
  detail: FlowDetail;
}

/** How the shared-limit figures came about. */
export interface FlowDetail {
  modelRequests: number;
  refused: number;
  /** 429s the coordinators counted (`yiem_model_limit_429_total`, summed). */
  refusedSeenByCoordinators: number;
  /** The whole windows `flowLimitUsedPct` is taken over, and the tokens admitted in them. */
  loadedWindows: number;
  tokensInLoadedWindows: number;
  /** Model calls of each coordinator (`yiem_model_calls_total`). */
  callsByCoordinator: number[];
  /** Mean wait for a turn (s): `yiem_model_limit_wait_seconds` sum ÷ count over both. */
  meanWaitS: number;
  /** From the first request sent to the last answer (s). */
  wallS: number;
}

/** A part of the scenario on the shared cluster: the figures it adds. */
export type FlowPhase = (
  cluster: FlowCluster,
  plan: FlowPlan,
  progress: (text: string) => void,
) => Promise<Partial<Flow>>;

/** The cluster the phases share: the sessions cluster and its coordinators' URLs. */
export interface FlowCluster {
  sessions: SessionsCluster;
  coordinatorUrls: string[];
}
