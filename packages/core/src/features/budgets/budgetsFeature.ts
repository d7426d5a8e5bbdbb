import { lowerBudget } from "../../agents/agentRunConfig.js";
import { SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { HeldSession, RunFeature } from "../runFeature.js";
import { readInputBudgets } from "./inputBudgets.js";

/** What the budgets feature is built with. */
export interface BudgetsFeatureDeps {
  command: RedisClient;
  keys: ClusterKeys;
}

/**
 * Budgets: a run's limits (tokens, cost, model calls, tool calls) are its agent's and the
 * coordinator's, lowered by the own `budget` of every request the run answers (recorded with
 * its input, so a successor that resumes the run applies the same limits).
 *
 * How it composes: a child run's budget is what its parent's run had left when the child
 * started; after a handoff the run's requests' budgets apply to the target agent too; a
 * follow-up taken into a run lowers it by its own budget; an abort ends the run whatever is
 * left; a parked run spends nothing.
 */
export function budgetsFeature(deps: BudgetsFeatureDeps): RunFeature {
  return {
    name: "budgets",
    hold: (session) => ({
      openRun: async () => ({
        limitConfig: (config, inputIds) => lowerByRequestBudgets(deps, session, config, inputIds),
      }),
    }),
  };
}

/**
 * Lowers the run's budget by the own budgets of the inputs `inputIds` (their requests'
 * `budget`, recorded with them). A Redis failure stops the run before its next model call, to
 * be resumed.
 */
async function lowerByRequestBudgets(
  deps: BudgetsFeatureDeps,
  session: HeldSession,
  config: { budget?: Parameters<typeof lowerBudget>[0] },
  inputIds: readonly string[],
): Promise<void> {
  let budgets: Awaited<ReturnType<typeof readInputBudgets>>;
  try {
    budgets = await readInputBudgets(deps.command, deps.keys, session.sessionId, inputIds);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
  for (const budget of budgets) config.budget = lowerBudget(config.budget, budget);
}
