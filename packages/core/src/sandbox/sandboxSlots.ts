import { readSetting } from "../settings/readSettings.js";

/**
 * How many sandbox child processes one process runs at once (`YIEM_SANDBOX_CONCURRENCY`,
 * default 4); further calls wait for a slot. Each sandbox is a Node process of ~50 MB, so a
 * worker running many written-tool calls at once must not start them all together.
 */
export class SandboxSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Resolves with a release function once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.running >= this.limit)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }
}

let shared: SandboxSlots | undefined;

/**
 * The slots this process shares between all its sandbox runs, made on first use with
 * `YIEM_SANDBOX_CONCURRENCY` (read then, through the settings catalogue; the coordinator and
 * the workers check it at start). Throws `ConfigError` for a malformed value.
 */
export function sandboxSlots(): SandboxSlots {
  shared ??= new SandboxSlots(readSetting("sandboxConcurrency"));
  return shared;
}
