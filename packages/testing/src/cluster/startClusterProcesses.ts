import type { ClusterLaunch, ClusterRole } from "./clusterRoles.js";
import { createProcessSlot, type ProcessSlot } from "./processSlot.js";

/** Options of {@link startClusterProcesses}. */
export interface ClusterProcessesOptions {
  /**
   * What every process gets (`REDIS_URL` or `REDIS_CLUSTER_NODES`, `YIEM_PREFIX`, the model's
   * `OPENAI_*`, `YIEM_TOOLS_DIR`…), on top of this process's environment.
   */
  env: Record<string, string>;
  /** What the processes of one role get on top of `env` (e.g. a worker's own `REDIS_URL`). */
  roleEnv?: Partial<Record<ClusterRole, Record<string, string>>>;
  /** How many coordinators to start (`coordinator-1`…). @defaultValue 1 */
  coordinators?: number;
  /** How many tool workers to start (`worker-1`…). @defaultValue 2 */
  workers?: number;
  /** How many gateways to start (`gateway-1`…). @defaultValue 0 */
  gateways?: number;
  /** The Yiem checkout the commands run in (`apps/…` relative to it). @defaultValue this process's */
  cwd?: string;
  /** Compiled as deployed, or from the TypeScript sources. @defaultValue `"compiled"` */
  launch?: ClusterLaunch;
  /** A folder for one log file per slot (see `ProcessSlotOptions.logDir`). */
  logDir?: string;
  /** How long each process may take to log that it is ready. @defaultValue 60 s */
  readyTimeoutMs?: number;
  /** Tools every coordinator's and worker's ready line must list. */
  expectTools?: string[];
}

/** What one more process gets beyond its role's environment. */
export interface AddProcessOptions {
  /** Environment on top of the cluster's `env` and the role's `roleEnv`. */
  env?: Record<string, string>;
  /** `node` flags before the entry point (e.g. `--inspect=127.0.0.1:0`, `--cpu-prof`). */
  nodeFlags?: string[];
}

/** A running set of Yiem processes, each in a restartable {@link ProcessSlot}. */
export interface ClusterProcesses {
  /** The coordinators' slots (`coordinator-1`…), in the order they were added. */
  readonly coordinators: ProcessSlot[];
  /** The tool workers' slots (`worker-1`…; the name is each one's `YIEM_WORKER_ID`). */
  readonly workers: ProcessSlot[];
  /** The gateways' slots (`gateway-1`…). */
  readonly gateways: ProcessSlot[];
  /**
   * Starts one more process of `role` named after its place (`worker-3`) and resolves with its
   * slot once it is ready; one that does not get ready is stopped and not kept.
   */
  add(role: ClusterRole, options?: AddProcessOptions): Promise<ProcessSlot>;
  /**
   * Stops every process: the gateways first, then coordinators and workers at once (SIGTERM,
   * SIGKILL after `graceMs`, default 5 s). It never stops Redis or a model server: they are
   * the caller's.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts a Yiem cluster's processes as real child processes, as the deployment runs them
 * (`launch`): `coordinators` coordinators, `workers` tool workers and `gateways` gateways, all
 * at once, each with `env` and its role's `roleEnv`, each on a free HTTP port of its own where
 * its role has one. Resolves once every one logged that it is ready; when one does not, every
 * process is stopped and this rejects. Redis and the model are the caller's (`startTestRedis`,
 * `startScriptedModelServer`): their addresses come in `env`.
 *
 * @example
 * const processes = await startClusterProcesses({
 *   cwd: repoRoot,
 *   env: { REDIS_URL: redis.url, YIEM_PREFIX: redis.prefix, OPENAI_BASE_URL: model.baseURL },
 *   workers: 3,
 * });
 */
export async function startClusterProcesses(
  options: ClusterProcessesOptions,
): Promise<ClusterProcesses> {
  const slots: Record<ClusterRole, ProcessSlot[]> = { coordinator: [], worker: [], gateway: [] };
  const named: Record<ClusterRole, number> = { coordinator: 0, worker: 0, gateway: 0 };
  const add = async (role: ClusterRole, extra: AddProcessOptions = {}) => {
    const list = slots[role];
    named[role] += 1;
    const slot = createProcessSlot({
      role,
      name: `${role}-${named[role]}`,
      env: { ...options.env, ...options.roleEnv?.[role], ...extra.env },
      cwd: options.cwd,
      launch: options.launch,
      nodeFlags: extra.nodeFlags,
      logDir: options.logDir,
      readyTimeoutMs: options.readyTimeoutMs,
      expectTools: options.expectTools,
    });
    list.push(slot);
    try {
      await slot.restart();
    } catch (err) {
      list.splice(list.indexOf(slot), 1);
      await slot.stop(); // already stopped: closes its log
      throw err;
    }
    return slot;
  };
  const close = async (graceMs = 5000) => {
    await Promise.all(slots.gateway.map((slot) => slot.stop(graceMs)));
    await Promise.all([...slots.coordinator, ...slots.worker].map((slot) => slot.stop(graceMs)));
  };
  const roles: ClusterRole[] = [
    ...Array<ClusterRole>(options.coordinators ?? 1).fill("coordinator"),
    ...Array<ClusterRole>(options.workers ?? 2).fill("worker"),
    ...Array<ClusterRole>(options.gateways ?? 0).fill("gateway"),
  ];
  const started = await Promise.allSettled(roles.map((role) => add(role)));
  const failed = started.find((result) => result.status === "rejected");
  if (failed) {
    await close(1000);
    throw failed.reason;
  }
  return {
    coordinators: slots.coordinator,
    workers: slots.worker,
    gateways: slots.gateway,
    add,
    close,
  };
}
