import { SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { AgentLoopConfig, RunBudget } from "../../types/index.js";
import type { FeatureRun, HeldSession, OpenedRun, Reservation, RunFeature } from "../runFeature.js";
import { parseInputBudget, readAllInputBudgets, readInputBudgets } from "./inputBudgets.js";
import { lowerBudget } from "./protocol.js";
import { TreeLedger } from "./treeLedger.js";

/** What the budgets feature is built with. */
export interface BudgetsFeatureDeps {
  command: RedisClient;
  keys: ClusterKeys;
}

/**
 * Budgets: a run's limits (tokens, cost, model calls, tool calls) are its agent's and the
 * coordinator's, lowered by the own `budget` of every request the run answers (recorded with
 * its input, so a successor that resumes the run applies the same limits). A tree of agents
 * spends from one ledger at its root (`TreeLedger`): each node reserves every model call and
 * every child start there first, so the tree never makes more model calls than its root's
 * budget, at any fan-out.
 *
 * How it composes: a child run spends from its root's ledger (and is also capped by what its
 * parent had left when it started); after a handoff the run's requests' budgets apply to the
 * target agent too; a follow-up taken into a run lowers it by its own budget; an abort ends
 * the run whatever is left; a parked run spends nothing.
 */
export function budgetsFeature(deps: BudgetsFeatureDeps): RunFeature {
  const ledger = new TreeLedger(deps.command, deps.keys);
  return {
    name: "budgets",
    hold: (session) => {
      /** The session's input budgets, read right behind the opening of the hold's next run. */
      let opening: Promise<Map<string, string>> | undefined;
      return {
        runOpening() {
          opening = readAllInputBudgets(deps.command, deps.keys, session.sessionId);
          opening.catch(() => undefined); // the run's first `limitConfig` throws it
        },
        openRun: async (run) => {
          const read = opening;
          opening = undefined;
          return openBudgetRun(deps, ledger, session, run, read);
        },
      };
    },
  };
}

/**
 * `openedWith`: the session's input budgets as read right behind the script that opened the
 * run (`runOpening`), when it was: they hold the budget of every input the opening took in, so
 * the run's first `limitConfig` (for those inputs) reads nothing more.
 */
async function openBudgetRun(
  deps: BudgetsFeatureDeps,
  ledger: TreeLedger,
  session: HeldSession,
  run: OpenedRun,
  openedWith?: Promise<Map<string, string>>,
): Promise<FeatureRun> {
  let config: AgentLoopConfig | undefined;
  /** The read `readLimits` started, for the `limitConfig` of the same `requestIds`. */
  let started: { requestIds: readonly string[]; budgets: Promise<RunBudget[]> } | undefined;
  /** The opening's read, for the first `readLimits` (of the inputs the opening took in) only. */
  let atOpen = openedWith;
  const spend = (what: Reservation | { kind: "report" }) =>
    spendFromTree(ledger, session, run, config, what);
  return {
    readLimits(requestIds) {
      const opened = atOpen;
      atOpen = undefined;
      const budgets = opened
        ? budgetsOfOpening(session, opened, requestIds)
        : readRequestBudgets(deps, session, requestIds);
      budgets.catch(() => undefined); // its `limitConfig` throws it
      started = { requestIds, budgets };
    },
    async limitConfig(given, requestIds) {
      config = given;
      const read = started?.requestIds === requestIds ? started.budgets : undefined;
      started = undefined;
      const budgets = await (read ?? readRequestBudgets(deps, session, requestIds));
      for (const budget of budgets) given.budget = lowerBudget(given.budget, budget);
    },
    reserve: (what) => spend(what),
    async afterFinish() {
      await spend({ kind: "report" }).catch(() => undefined); // best effort: the tree is done with it
    },
  };
}

/**
 * Reserves from (or reports to) the run's tree's ledger. A run without a budget spends from
 * none (a child of a root with a budget always has one: what its parent had left). The root
 * sends its budget's limits. A Redis failure stops the run before its next model call.
 */
async function spendFromTree(
  ledger: TreeLedger,
  session: HeldSession,
  run: OpenedRun,
  config: AgentLoopConfig | undefined,
  what: Reservation | { kind: "report" },
): Promise<string | undefined> {
  const budget = config?.budget;
  if (!budget) return undefined;
  const root = run.treeRoot();
  const node = { sessionId: session.sessionId, runId: run.runId };
  const isRoot = root.sessionId === node.sessionId && root.runId === node.runId;
  try {
    return await ledger.request(root, node, what.kind, run.usage(), {
      ...(isRoot ? { limits: budget } : {}),
      ...(what.kind === "childRun" ? { childSessionId: what.childSessionId } : {}),
    });
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
}

/** The budgets of `requestIds` in the opening's read of every input budget of the session. */
async function budgetsOfOpening(
  session: HeldSession,
  opened: Promise<Map<string, string>>,
  requestIds: readonly string[],
): Promise<RunBudget[]> {
  let all: Map<string, string>;
  try {
    all = await opened;
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
  return requestIds.flatMap((id) => parseInputBudget(all.get(id)));
}

/**
 * The own budgets of the inputs `requestIds` (their requests' `budget`, recorded with them),
 * which lower the run's budget. A Redis failure (`SessionStoreError`) stops the run before its
 * next model call, to be resumed.
 */
async function readRequestBudgets(
  deps: BudgetsFeatureDeps,
  session: HeldSession,
  requestIds: readonly string[],
): Promise<RunBudget[]> {
  try {
    return await readInputBudgets(deps.command, deps.keys, session.sessionId, requestIds);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
}
