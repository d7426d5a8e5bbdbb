import type { SandboxLimits } from "../sandbox/sandboxLimits.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import { toAgentTool, writtenToolOf } from "./toAgentTool.js";
import { loadWrittenTools, readWrittenToolsRev } from "./writtenToolStore.js";
import type { WrittenToolsRedis } from "./writtenToolTypes.js";

/** What one sync did. */
export interface WrittenToolsSyncResult {
  /** The revision the store now reflects; pass it back as `lastRev` next time. */
  rev: number;
  /** Written tools registered or replaced by a newer version. */
  added: string[];
  /** Written tools skipped because a tool that is not a written tool has their name. */
  conflicts: string[];
}

/**
 * Brings the written tools of `store` up to date with Redis: when the revision differs from
 * `lastRev` (or there is none), reads every written tool and registers each one that is new or
 * whose hash changed. Never replaces a tool that is not a written tool (built-ins win; the
 * name is reported in `conflicts`). When the revision is unchanged it costs one GET.
 * Rejects when Redis fails; the store is then left as it was.
 *
 * @example
 * let rev: number | undefined;
 * ({ rev } = await syncWrittenTools(redis, "yiem", store, rev));
 */
export async function syncWrittenTools(
  redis: WrittenToolsRedis,
  prefix: string,
  store: ToolStore,
  lastRev?: number,
  limits: SandboxLimits = {},
): Promise<WrittenToolsSyncResult> {
  if (lastRev !== undefined) {
    const rev = await readWrittenToolsRev(redis, prefix);
    if (rev === lastRev) return { rev, added: [], conflicts: [] };
  }
  const snapshot = await loadWrittenTools(redis, prefix);
  const added: string[] = [];
  const conflicts: string[] = [];
  for (const definition of snapshot.definitions) {
    const existing = store.tools.get(definition.name);
    const written = existing ? writtenToolOf(existing) : undefined;
    if (existing && !written) {
      conflicts.push(definition.name);
    } else if (written?.hash !== definition.hash) {
      registerTool(store, toAgentTool(definition, limits));
      added.push(definition.name);
    }
  }
  return { rev: snapshot.rev, added, conflicts };
}

/** Options of `createWrittenToolsSync`. */
export interface WrittenToolsSyncOptions {
  redis: WrittenToolsRedis;
  prefix: string;
  store: ToolStore;
  /** Sandbox limits of the tools it registers. */
  limits?: SandboxLimits;
}

/** A store's running sync: remembers the revision, shares one read among concurrent callers. */
export interface WrittenToolsSync {
  /** Syncs now (or joins the sync in flight). Never rejects: a Redis failure is in `error`. */
  sync(): Promise<WrittenToolsSyncResult & { error?: string }>;
  /** The revision last synced, if any. */
  rev(): number | undefined;
}

/**
 * A sync to call wherever a process is about to use its tools (before each LLM call on a
 * coordinator, before each job on a worker): one GET when nothing changed; concurrent callers
 * share one read. Never rejects.
 *
 * @example
 * const written = createWrittenToolsSync({ redis, prefix: "yiem", store: toolStore });
 * await written.sync();
 */
export function createWrittenToolsSync(options: WrittenToolsSyncOptions): WrittenToolsSync {
  let lastRev: number | undefined;
  let inFlight: ReturnType<WrittenToolsSync["sync"]> | undefined;
  const { redis, prefix, store, limits } = options;
  const run = async () => {
    try {
      const result = await syncWrittenTools(redis, prefix, store, lastRev, limits);
      lastRev = result.rev;
      return result;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      return { rev: lastRev ?? 0, added: [], conflicts: [], error };
    } finally {
      inFlight = undefined;
    }
  };
  return {
    sync: () => {
      inFlight ??= run();
      return inFlight;
    },
    rev: () => lastRev,
  };
}
