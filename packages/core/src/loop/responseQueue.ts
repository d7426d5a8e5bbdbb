import { YiemError } from "../errors/yiemError.js";
import type { AssistantMessage } from "../types/index.js";

/** Thrown to callers still waiting for a response when the agent shuts down. Terminal. */
export class AgentShutdownError extends YiemError {
  override name = "AgentShutdownError";
  constructor() {
    super("the agent was shut down");
  }
}

/**
 * Final responses in run order (the YiemAgent lifecycle's output channel): `deliver` adds one, `take`
 * resolves with the oldest, waiting when none is there yet.
 */
export class ResponseQueue {
  private ready: AssistantMessage[] = [];
  private waiters: Array<{ resolve: (r: AssistantMessage) => void; reject: (e: Error) => void }> =
    [];
  private closed = false;

  /** Hands a response to the oldest waiter, or keeps it for the next `take`. */
  deliver(response: AssistantMessage): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(response);
    else this.ready.push(response);
  }

  /** The next response in run order. Rejects with `AgentShutdownError` once closed and empty. */
  take(): Promise<AssistantMessage> {
    const next = this.ready.shift();
    if (next) return Promise.resolve(next);
    if (this.closed) return Promise.reject(new AgentShutdownError());
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Rejects every waiter; later `take`s reject once the kept responses are taken. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new AgentShutdownError());
  }
}
