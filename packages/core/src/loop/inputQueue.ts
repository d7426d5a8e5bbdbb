import type { UserMessage } from "../types/index.js";

/** One queued input: plain input joins the running run, a follow-up becomes its own run. */
export type QueuedInput =
  | { kind: "input"; message: UserMessage }
  | { kind: "followUp"; message: UserMessage };

/**
 * The agent's inbox, in arrival order (the YiemAgent lifecycle's input and follow-up channels as one list).
 *
 * While a run is active, `drainInputs` hands it every plain input, wherever it stands, so
 * input on a busy agent joins the current run before its next LLM call. When a run ends,
 * `takeNextRunStart` opens the next run with the oldest entry, so a follow-up runs as soon
 * as the current run has answered, ahead of input that arrives after that.
 */
export class InputQueue {
  private entries: QueuedInput[] = [];

  /** Adds an entry at the end. */
  push(entry: QueuedInput): void {
    this.entries.push(entry);
  }

  /** Removes and returns every plain input, in arrival order; follow-ups stay. */
  drainInputs(): UserMessage[] {
    const inputs = this.entries.filter((entry) => entry.kind === "input");
    this.entries = this.entries.filter((entry) => entry.kind !== "input");
    return inputs.map((entry) => entry.message);
  }

  /** Removes and returns the oldest entry's message, which opens the next run. */
  takeNextRunStart(): UserMessage | undefined {
    return this.entries.shift()?.message;
  }

  /** Drops everything (shutdown). */
  clear(): void {
    this.entries = [];
  }

  get size(): number {
    return this.entries.length;
  }
}
