import type {
  BatchPlan,
  FeatureHold,
  FeatureRun,
  FinishedRun,
  OpenedRun,
  Reservation,
  TakenAgent,
  TreeRoot,
} from "../../features/runFeature.js";
import type { EventTree } from "../../state/eventBus.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage, ToolExecutor } from "../../types/index.js";

/** Every feature's part of one run, called as one (in the features' order). */
export interface FeatureRuns {
  /** Whether any feature says the run opened aborted. */
  abortedAtOpen(): Promise<boolean>;
  /** The root of the run's tree, when a feature says it. */
  readonly treeRoot: TreeRoot | undefined;
  /** Every feature's `reserve`: the first refusal. */
  reserve(what: Reservation): Promise<string | undefined>;
  /** Where the run's events are seen too (the first feature's that says). */
  readonly eventTree: EventTree | undefined;
  /** The run's executor wrapped by every feature, the first outermost. */
  wrapExecutor(inner: ToolExecutor): ToolExecutor;
  /** Whether some feature keeps `event` back. */
  holdsBack(event: AgentEvent): boolean;
  /** Every feature's `readLimits`, then every feature's `limitConfig` in turn. */
  limitConfig(config: AgentLoopConfig, requestIds: readonly string[]): Promise<void>;
  /** Every feature's `beforeAppend`; the first plan returned wins. */
  beforeAppend(messages: AgentMessage[]): Promise<BatchPlan | undefined>;
  afterAppend(settle: () => Promise<void>): Promise<void>;
  beforeFinish(): Promise<void>;
  afterFinish(run: FinishedRun): Promise<void>;
}

/** Tells every feature of a hold that it took its session's agent. */
export async function takeAgentInFeatures(holds: FeatureHold[], taken: TakenAgent): Promise<void> {
  for (const hold of holds) await hold.takeAgent?.(taken);
}

/** Tells every feature of a hold that the script opening its next run was just sent. */
export function runOpeningInFeatures(holds: FeatureHold[]): void {
  for (const hold of holds) {
    try {
      hold.runOpening?.();
    } catch {
      // `runOpening` never throws
    }
  }
}

/** Tells every feature of a hold that the hold ended (a feature that throws skips no other). */
export function releaseFeatureHolds(holds: FeatureHold[]): void {
  for (const hold of holds) {
    try {
      hold.released?.();
    } catch {
      // `released` never throws
    }
  }
}

/** Opens every feature's part of a run and combines them. */
export async function openFeatureRuns(holds: FeatureHold[], run: OpenedRun): Promise<FeatureRuns> {
  const parts: FeatureRun[] = [];
  for (const hold of holds) {
    const part = await hold.openRun?.(run);
    if (part) parts.push(part);
  }
  return combine(parts);
}

function combine(parts: FeatureRun[]): FeatureRuns {
  const waits = parts.flatMap((part) => part.callWaits ?? []);
  return {
    async abortedAtOpen() {
      for (const part of parts) if (await part.abortedAtOpen?.()) return true;
      return false;
    },
    eventTree: parts.find((part) => part.eventTree)?.eventTree,
    treeRoot: parts.find((part) => part.treeRoot)?.treeRoot,
    async reserve(what) {
      for (const part of parts) {
        const refused = await part.reserve?.(what);
        if (refused) return refused;
      }
      return undefined;
    },
    wrapExecutor: (inner) =>
      parts.reduceRight(
        (executor, part) => part.wrapExecutor?.(executor, waits) ?? executor,
        inner,
      ),
    holdsBack: (event) => parts.some((part) => part.holdsBack?.(event)),
    async limitConfig(config, requestIds) {
      for (const part of parts) part.readLimits?.(requestIds);
      for (const part of parts) await part.limitConfig?.(config, requestIds);
    },
    async beforeAppend(messages) {
      let plan: BatchPlan | undefined;
      for (const part of parts) {
        const planned = await part.beforeAppend?.(messages);
        plan ??= planned;
      }
      return plan;
    },
    async afterAppend(settle) {
      for (const part of parts) await part.afterAppend?.(settle);
    },
    async beforeFinish() {
      for (const part of parts) await part.beforeFinish?.();
    },
    async afterFinish(run) {
      for (const part of parts) await part.afterFinish?.(run);
    },
  };
}
