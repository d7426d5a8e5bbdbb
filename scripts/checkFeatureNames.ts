/**
 * `npm run check:features` (run by `npm run lint`): keeps each run feature (approvals, child
 * runs, handoffs, budgets) named in its own folder, `packages/core/src/features/<feature>/`.
 * A file of `@yiem/core` outside `features/` whose code (comments left out) names one fails
 * the check unless it is one of the places listed below, each with the reason it may. An
 * entry that no longer names any fails too, so the list only shrinks as features move home.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const core = "packages/core/src";

/** The words that name a run feature. */
const FEATURE_WORDS = /approval|childRun|child run|handoff|budget|ledger/i;

/** Why each place outside `features/` may name a feature. */
const REASONS = {
  publicIndex: "the public index, the internal index or the client's public index",
  publicTypes: "the public types (a tool's approval, an event, a budget, a stop reason)",
  compositionRoot: "the composition root, the one place that lists the features",
  agentDefinition: "an agent definition's public fields (`budget`, `handoffs`) and their checks",
  loop: "the loop itself stops at a budget and switches agent on a handoff (no cluster needed)",
  loopApi: "the runner passes the loop's own budget and handoff hooks (`RunHandoff`)",
  publicProtocol: "a public shape other processes read (job data, tool definitions, bus events)",
  publicClient: "the client's public methods, each a feature's store or protocol behind it",
  sessionStore: "an input's budget is stored with the input, in the same script",
  redisRegistry: "the one place that builds keys, loads scripts or names their replies",
  settings: "a setting of the catalogue and its reader",
  publicMetrics: "a public metric's name and help (`yiem_approvals_pending`, `yiem_runs_parked`)",
  otherMeaning: "another meaning of the word (a tool job handed between workers, a size budget)",
} as const;

/** The files (under `packages/core/src`) that may name a feature, with their reason. */
const ALLOWED: Record<string, keyof typeof REASONS> = {
  "index.ts": "publicIndex",
  "internal.ts": "publicIndex",
  "client/index.ts": "publicIndex",
  "types/events.ts": "publicTypes",
  "types/index.ts": "publicTypes",
  "types/messages.ts": "publicTypes",
  "types/pipeline.ts": "publicTypes",
  "types/tools.ts": "publicTypes",
  "types/usage.ts": "publicTypes",
  "coordinator/coordinator.ts": "compositionRoot",
  "coordinator/http/runGauges.ts": "publicMetrics",
  "coordinator/http/coordinatorMetrics.ts": "publicMetrics",
  "agents/agentRegistry.ts": "agentDefinition",
  "agents/agentRunConfig.ts": "agentDefinition",
  "agents/agentsFile.ts": "agentDefinition",
  "agents/defineAgent.ts": "agentDefinition",
  "loop/runAgentLoop.ts": "loop",
  "loop/runBudget.ts": "loop",
  "loop/runUsage.ts": "loop",
  "tools/batchSteps.ts": "loop",
  "tools/prepareToolCall.ts": "loop",
  "coordinator/run/sessionRunner.ts": "loopApi",
  "coordinator/run/sessionHold.ts": "loopApi",
  "coordinator/run/sessionAgent.ts": "loopApi",
  "coordinator/intake/requestJobs.ts": "sessionStore",
  "protocol/coordinatorJob.ts": "publicProtocol",
  "protocol/busEvent.ts": "publicProtocol",
  "protocol/toolDefinitions.ts": "publicProtocol",
  "state/eventBus.ts": "publicProtocol",
  "mcp/mcpConfig.ts": "publicProtocol",
  "mcp/mcpAgentTool.ts": "publicProtocol",
  "client/yiemClient.ts": "publicClient",
  "state/sessionStore.ts": "sessionStore",
  "redis/keys.ts": "redisRegistry",
  "redis/scripts.ts": "redisRegistry",
  "redis/scriptReplies.ts": "redisRegistry",
  "redis/replicaAcks.ts": "redisRegistry",
  "settings/catalogue.ts": "settings",
  "settings/clusterConfig.ts": "settings",
  "settings/tenantSettings.ts": "settings",
  "ops/priceTable.ts": "settings",
  "protocol/eventArguments.ts": "otherMeaning",
  "protocol/toolJobs.ts": "otherMeaning",
  "worker/toolWorker.ts": "otherMeaning",
  "sandbox/sandboxHost.mjs": "otherMeaning",
};

/** Every source file of `@yiem/core` outside `features/`, relative to `packages/core/src`. */
function sourceFiles(): string[] {
  const entries: Dirent[] = readdirSync(join(root, core), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(m?ts|m?js|lua)$/.test(entry.name))
    .map((entry) => relative(join(root, core), join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith("features/"));
}

/** The code of a file, comment lines and block comments blanked (line numbers kept). */
function codeLines(file: string): string[] {
  const text = readFileSync(join(root, core, file), "utf8");
  const blanked = file.endsWith(".lua")
    ? text.replace(/--\[\[[\s\S]*?\]\]/g, (c) => c.replace(/[^\n]/g, ""))
    : text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ""));
  return blanked.split("\n").map((line) => line.replace(/(\/\/|--).*$/, ""));
}

/** `file:line` of each line naming a feature, by file. */
export function findFeatureNames(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    const lines = codeLines(file).flatMap((line, i) =>
      FEATURE_WORDS.test(line) ? [`${core}/${file}:${i + 1}`] : [],
    );
    if (lines.length > 0) found.set(file, lines);
  }
  return found;
}

const found = findFeatureNames();
const outside = [...found].filter(([file]) => !(file in ALLOWED));
const stale = Object.keys(ALLOWED).filter((file) => !found.has(file));
if (outside.length > 0) {
  console.error(
    `a run feature named outside its folder (move it to packages/core/src/features/<feature>/, or list the file in scripts/checkFeatureNames.ts with its reason):\n${outside.flatMap(([, lines]) => lines.map((l) => `  ${l}`)).join("\n")}`,
  );
  process.exitCode = 1;
}
if (stale.length > 0) {
  console.error(
    `scripts/checkFeatureNames.ts lists files that name no feature any more (remove them):\n${stale.map((f) => `  ${core}/${f}`).join("\n")}`,
  );
  process.exitCode = 1;
}
