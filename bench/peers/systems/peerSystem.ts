/** What the driver needs of each system under test. */
export interface PeerSystem {
  /** The row's name in the table. */
  name: string;
  /** Starts run `run` (a fresh key) and resolves with its final answer once there is one. */
  run(run: string): Promise<string>;
  /** The pids of every process of the system now, its servers included. */
  pids(): Promise<number[]>;
  /**
   * SIGKILLs the orchestrator (the process that runs the agent loop) and, as a supervisor
   * would, starts a replacement at once; resolves once the replacement is ready.
   */
  killOrchestrator(): Promise<void>;
  /**
   * SIGKILLs one tool-worker process (the first; the system's other tool process keeps
   * serving) and, as a supervisor would, starts a replacement at once; resolves once it is
   * ready. Tool calls it was running are run again as the system allows (one retry each).
   */
  killToolWorker(): Promise<void>;
  close(): Promise<void>;
  /** The system's Redis, where it has one (for `criticalPath.ts`'s `MONITOR`). */
  redisUrl?: string;
  /** A name for each pid `pids()` gives, in its order (for `criticalPath.ts`). */
  pidNames?: string[];
}

/** What every system is started with. */
export interface PeerContext {
  /** The scripted model's base URL (`…/v1`). */
  modelURL: string;
  /** The side-effects file every `step` call appends to. */
  effectsFile: string;
  /** A private folder for the system's data. */
  dataDir: string;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
