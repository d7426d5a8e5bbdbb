import type { WorkerInfo } from "./workerRegistry.js";

/** The definition of a tool the cluster uses: its digest and the worker whose it is. */
export interface ChosenDefinition {
  digest: string;
  workerId: string;
}

/**
 * A tool that live workers announce with different definitions: each digest with the
 * workers that announce it, and the one used (see `resolveAnnouncedTools`).
 */
export interface ToolConflict {
  tool: string;
  definitions: Array<{ digest: string; workers: string[] }>;
  chosen: ChosenDefinition;
}

/** What the live workers announce, resolved: one definition per tool, and the conflicts. */
export interface ResolvedTools {
  /** Tool name → the definition used, in the order the workers announce them. */
  chosen: Map<string, ChosenDefinition>;
  conflicts: ToolConflict[];
}

/** Whether worker `a` started after `b` (ties: the greater id), i.e. its definitions win. */
function startedLater(a: WorkerInfo, b: WorkerInfo): boolean {
  return a.startedAt !== b.startedAt ? a.startedAt > b.startedAt : a.workerId > b.workerId;
}

/** Each tool's announcing workers, by the digest of the definition they announce. */
function digestsByTool(workers: WorkerInfo[]): Map<string, Map<string, WorkerInfo[]>> {
  const byTool = new Map<string, Map<string, WorkerInfo[]>>();
  for (const worker of workers) {
    for (const [tool, digest] of Object.entries(worker.toolDigests ?? {})) {
      const digests = byTool.get(tool) ?? new Map<string, WorkerInfo[]>();
      digests.set(digest, [...(digests.get(digest) ?? []), worker]);
      byTool.set(tool, digests);
    }
  }
  return byTool;
}

/**
 * Resolves the tools live workers announce. A tool announced with one definition gets it; a
 * tool announced with several is a conflict, resolved by one rule: **the definition of the
 * most recently started worker announcing the tool wins** (ties by the greater worker id),
 * the rule tool limits follow too (the last process to start sets them). Every coordinator
 * and `yiem workers` apply it to the same registry, so they agree.
 *
 * @example resolveAnnouncedTools(await client.workers()).conflicts // [{ tool: "search", … }]
 */
export function resolveAnnouncedTools(workers: WorkerInfo[]): ResolvedTools {
  const chosen = new Map<string, ChosenDefinition>();
  const conflicts: ToolConflict[] = [];
  for (const [tool, digests] of digestsByTool(workers)) {
    let latest: { digest: string; worker: WorkerInfo } | undefined;
    for (const [digest, announcing] of digests) {
      for (const worker of announcing) {
        if (!latest || startedLater(worker, latest.worker)) latest = { digest, worker };
      }
    }
    if (!latest) continue;
    const choice = { digest: latest.digest, workerId: latest.worker.workerId };
    chosen.set(tool, choice);
    if (digests.size < 2) continue;
    const definitions = [...digests].map(([digest, announcing]) => ({
      digest,
      workers: announcing.map((w) => w.workerId),
    }));
    conflicts.push({ tool, definitions, chosen: choice });
  }
  return { chosen, conflicts };
}
