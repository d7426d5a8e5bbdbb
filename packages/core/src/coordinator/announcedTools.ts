import type { Logger } from "../ops/logger.js";
import { parseToolDefinition, type ToolDefinition } from "../protocol/toolDefinitions.js";
import { isLimitedTool } from "../protocol/toolQueues.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { resolveAnnouncedTools, type ToolConflict } from "../state/toolAnnouncements.js";
import { limitQueueOf, syncToolLimits } from "../state/toolLimits.js";
import { listWorkers, readToolDefinitions, WORKER_TTL_MS } from "../state/workerRegistry.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import type { AgentTool } from "../types/index.js";
import type { WorkerOnlyTool } from "./run/toolPlacement.js";

/** Options of `startAnnouncedTools`. */
export interface AnnouncedToolsOptions {
  command: RedisClient;
  keys: ClusterKeys;
  /** The coordinator's store: announced tools go in beside its own, which always win. */
  toolStore: ToolStore;
  log: Logger;
  /** How often the registry is read. @defaultValue a worker's heartbeat period (2 s) */
  intervalMs?: number;
  /** Told the number of tools with conflicting definitions after each refresh (a metric). */
  onConflicts?: (count: number) => void;
}

/** The announced tools a coordinator keeps (see `startAnnouncedTools`). */
export interface AnnouncedTools {
  /** What this coordinator knows of `tool` when it is worker-only; `undefined` for its own tools. */
  workerOnly(tool: AgentTool): WorkerOnlyTool | undefined;
  /** Reads the registry now and updates the store (never throws; a failure keeps what it has). */
  refresh(): Promise<void>;
  stop(): void;
}

/** An announced tool in the store, and the digest of the definition it was made from. */
interface Announced {
  digest: string;
  tool: AgentTool;
}

/**
 * The stand-in of an announced tool in the coordinator's store: the definition's fields, and
 * no code. It is offered to the model and its arguments are validated against its schema
 * here, unless the tool has its own `prepareArguments` / `validateRequiredArgs`: then nothing
 * is validated here (an accept-all validator) and the worker prepares and validates
 * (`prepareOnWorker`). Its `execute` is never called: its calls always go to the workers.
 */
function standInFor(definition: ToolDefinition): AgentTool {
  const { hasPrepareArguments, hasValidateRequiredArgs, ...fields } = definition;
  const own = hasPrepareArguments || hasValidateRequiredArgs;
  return {
    ...fields,
    ...(own ? { validateRequiredArgs: () => undefined } : {}),
    execute: () => {
      throw new Error(`${definition.name} runs on tool workers only`);
    },
  };
}

/** The state one coordinator keeps between refreshes. */
interface SyncState {
  options: AnnouncedToolsOptions;
  /** Tool name → the announced tool this coordinator put in its store. */
  owned: Map<string, Announced>;
  /** Stand-in → what placement needs (a WeakMap: replaced stand-ins are forgotten). */
  standIns: WeakMap<AgentTool, WorkerOnlyTool>;
  /** Definitions read so far, by digest (immutable: a digest names one content). */
  definitions: Map<string, ToolDefinition | undefined>;
  conflictsSeen: string;
  limitsSeen: string;
}

/** Reads the definitions of `digests` this coordinator has not read yet. */
async function readMissing(state: SyncState, digests: Iterable<string>): Promise<void> {
  const { command, keys } = state.options;
  const missing = [...new Set(digests)].filter((digest) => !state.definitions.has(digest));
  for (const [digest, json] of await readToolDefinitions(command, keys, missing)) {
    state.definitions.set(digest, parseToolDefinition(json));
  }
}

/** Puts the chosen definitions in the store and removes the announced tools no worker has. */
function applyToStore(state: SyncState, chosen: Map<string, string>): void {
  const { toolStore, log } = state.options;
  const added: string[] = [];
  for (const [name, digest] of chosen) {
    const current = toolStore.tools.get(name);
    const mine = state.owned.get(name);
    if (current && current !== mine?.tool) continue; // the coordinator's own tool wins
    if (mine?.digest === digest) continue;
    const definition = state.definitions.get(digest);
    if (definition?.name !== name) continue; // not readable (yet): try again next refresh
    const tool = standInFor(definition);
    try {
      registerTool(toolStore, tool);
    } catch (err) {
      log.warn({ tool: name, err: (err as Error).message }, "announced tool refused");
      continue;
    }
    state.owned.set(name, { digest, tool });
    const prepareOnWorker = Boolean(
      definition.hasPrepareArguments || definition.hasValidateRequiredArgs,
    );
    state.standIns.set(tool, { prepareOnWorker });
    added.push(name);
  }
  const withdrawn = [...state.owned.keys()].filter((name) => !chosen.has(name));
  for (const name of withdrawn) {
    const mine = state.owned.get(name);
    if (toolStore.tools.get(name) === mine?.tool) toolStore.tools.delete(name);
    state.owned.delete(name);
  }
  if (added.length > 0) log.info({ tools: added }, "announced tools added");
  if (withdrawn.length > 0) log.info({ tools: withdrawn }, "announced tools withdrawn");
}

/** Warns once for each new set of conflicts; reports the count. */
function reportConflicts(state: SyncState, conflicts: ToolConflict[]): void {
  state.options.onConflicts?.(conflicts.length);
  const seen = JSON.stringify(conflicts);
  if (seen === state.conflictsSeen) return;
  state.conflictsSeen = seen;
  for (const conflict of conflicts) {
    state.options.log.warn({ ...conflict }, "tool definitions differ between workers");
  }
}

/**
 * Sets the limits of the announced limited tools on their queues when their definitions
 * changed (workers set them at their start too; this follows a tool that appears later, and
 * applies the chosen definition of a conflict). Tools of the same queue go together, so a
 * queue's limits are those its announced tools declare.
 */
async function syncAnnouncedLimits(state: SyncState): Promise<void> {
  const tools = [...state.owned.values()].map((a) => a.tool);
  const limited = new Set(tools.filter(isLimitedTool).map(limitQueueOf));
  const ofLimitedQueues = tools.filter((tool) => limited.has(limitQueueOf(tool)));
  const seen = JSON.stringify([...state.owned].map(([name, a]) => [name, a.digest]));
  if (seen === state.limitsSeen) return;
  state.limitsSeen = seen;
  if (ofLimitedQueues.length === 0) return;
  const { command, keys, log } = state.options;
  await syncToolLimits({ connection: command, keys, tools: ofLimitedQueues, log });
}

/** One refresh: the registry, the definitions not read yet, the store, conflicts, limits. */
async function refreshOnce(state: SyncState): Promise<void> {
  const { command, keys } = state.options;
  const { chosen, conflicts } = resolveAnnouncedTools(await listWorkers(command, keys));
  const digests = new Map([...chosen].map(([name, choice]) => [name, choice.digest]));
  await readMissing(state, digests.values());
  applyToStore(state, digests);
  reportConflicts(state, conflicts);
  const used = new Set(digests.values());
  for (const digest of state.definitions.keys()) {
    if (!used.has(digest)) state.definitions.delete(digest);
  }
  await syncAnnouncedLimits(state);
}

/**
 * Keeps the tools live workers announce (`WorkerInfo.toolDigests`, definitions stored
 * content-addressed) in the coordinator's store, beside its own: read in the background every
 * `intervalMs`, never on the path of an LLM call. A tool the coordinator has itself wins over
 * an announced one of the same name; a tool announced with different definitions is resolved
 * by `resolveAnnouncedTools` (the most recently started worker's wins) and warned about once
 * (`tool definitions differ between workers`); a tool no live worker announces any more is
 * removed (`announced tools withdrawn`), so the model no longer sees it and a call of it is
 * an unknown tool's error result. The first refresh is done when this resolves.
 *
 * @example
 * const announced = await startAnnouncedTools({ command, keys, toolStore, log });
 * createRemoteExecutor({ …, workerOnly: (tool) => announced.workerOnly(tool) });
 */
export async function startAnnouncedTools(options: AnnouncedToolsOptions): Promise<AnnouncedTools> {
  const state: SyncState = {
    options,
    owned: new Map(),
    standIns: new WeakMap(),
    definitions: new Map(),
    conflictsSeen: "[]",
    limitsSeen: "[]",
  };
  let running: Promise<void> | undefined;
  let again: Promise<void> | undefined;
  const readOnce = () =>
    refreshOnce(state).catch((err: Error) =>
      options.log.debug({ err: err.message }, "could not read the announced tools; retrying"),
    );
  // A read asked for while one runs may have come after what that one read (a worker's new
  // announcement): one more read follows it, shared by every ask meanwhile.
  const refresh = (): Promise<void> => {
    if (running) {
      again ??= running.then(() => {
        again = undefined;
        return refresh();
      });
      return again;
    }
    running = readOnce().finally(() => {
      running = undefined;
    });
    return running;
  };
  await refresh();
  const timer = setInterval(() => void refresh(), options.intervalMs ?? WORKER_TTL_MS / 3);
  timer.unref();
  return {
    workerOnly: (tool) => state.standIns.get(tool),
    refresh,
    stop: () => clearInterval(timer),
  };
}
