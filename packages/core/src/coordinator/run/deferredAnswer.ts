import type { AgentEvent, AgentMessage } from "../../types/index.js";

/** A run's answer kept back from the transcript, and the events emitted after it. */
export interface WaitingAnswer {
  message: AgentMessage;
  events: AgentEvent[];
}

/**
 * A run's answer without tool calls (its final answer, most often) kept out of Redis until the
 * run's next write, which carries it: the script that closes the run appends it first
 * (`finishRun`, in the round trip of the close, not one round trip before it), and any other
 * write (a structured output's correction, a drain) sends it ahead of itself. The events the
 * loop emits meanwhile (its `messageEnd`, the turn's `turnEnd`) are held with it: the close
 * stores them only if the run closes, in the same step as the append; another write publishes
 * them once the answer landed. So no watcher sees an answer the transcript does not hold, as
 * when the append was awaited before the loop went on. Only for a run whose events go to its
 * own session alone (not a child run's, which its root's stream sees too).
 */
export class DeferredAnswer {
  private waiting: WaitingAnswer | undefined;

  constructor(private readonly enabled: boolean) {}

  /** Whether `message` waits for the run's next write instead of being appended now. */
  defers(message: AgentMessage): boolean {
    return (
      this.enabled &&
      this.waiting === undefined &&
      message.role === "assistant" &&
      !message.content.some((block) => block.type === "toolCall")
    );
  }

  /** Keeps `message` back (`defers` said so): it is in the run's transcript, not yet in Redis. */
  defer(message: AgentMessage): void {
    this.waiting = { message, events: [] };
  }

  /** Holds `event` while an answer waits (true); false when none waits: publish it now. */
  hold(event: AgentEvent): boolean {
    if (!this.waiting) return false;
    this.waiting.events.push(event);
    return true;
  }

  /** The waiting answer and its held events, taken out (for the write that sends it). */
  take(): WaitingAnswer | undefined {
    const waiting = this.waiting;
    this.waiting = undefined;
    return waiting;
  }
}
