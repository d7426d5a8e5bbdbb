import type { Logger } from "../../ops/logger.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { SessionStore } from "../../state/sessionStore.js";
import type { AssistantMessage } from "../../types/index.js";

interface Waiter {
  sessionId: string;
  resolve(response: AssistantMessage): void;
  reject(reason: Error): void;
}

/** One wait for an input's response; `cancel` ends it with `reason`. */
export interface AnswerWait {
  promise: Promise<AssistantMessage>;
  cancel(reason: Error): void;
}

/** How often every open wait reads its response, in case an announcement was missed. */
const SWEEP_MS = 15_000;

/**
 * The coordinator's waits for input responses, grouped by session. A wait ends when the
 * coordinator's own run answers it (`settle`, no Redis read), or when another coordinator's
 * run does (one shared subscription to the responses channel; the stored response is read
 * once). Nothing here polls per wait: after a reconnect, and every 15 s as a safety net, all
 * open waits read their responses in one round trip.
 */
export class AnswerWaiters {
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly bySession = new Map<string, Set<string>>();
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly log: Logger,
  ) {}

  /** Listens on the responses channel with `subscriber` (a connection of its own). */
  async listen(subscriber: RedisClient, channel: string): Promise<void> {
    subscriber.on("message", (from: string, text: string) => {
      if (from === channel) void this.recheck(parseIds(text));
    });
    let subscribedOnce = false;
    subscriber.on("ready", () => {
      if (subscribedOnce) void this.recheck([...this.waiters.keys()]); // announcements missed while away
    });
    await subscriber.subscribe(channel);
    subscribedOnce = true;
    this.sweep = setInterval(() => void this.recheck([...this.waiters.keys()]), SWEEP_MS);
  }

  /** Starts waiting for the response to `inputId` of `sessionId`. Register before recording the input. */
  wait(sessionId: string, inputId: string): AnswerWait {
    let waiter: Waiter | undefined;
    const promise = new Promise<AssistantMessage>((resolve, reject) => {
      waiter = { sessionId, resolve, reject };
    });
    const entry = waiter as Waiter;
    this.add(inputId, entry);
    return {
      promise,
      cancel: (reason) => {
        if (this.remove(inputId, entry)) entry.reject(reason);
      },
    };
  }

  /** Ends the waits of these inputs with `response` (a run of this coordinator answered them). */
  settle(inputIds: string[], response: AssistantMessage): void {
    for (const inputId of inputIds) {
      for (const waiter of this.waiters.get(inputId) ?? []) {
        this.remove(inputId, waiter);
        waiter.resolve(response);
      }
    }
  }

  /** Sessions with open waits. */
  sessions(): string[] {
    return [...this.bySession.keys()];
  }

  /** True when some wait of `sessionId` is open. */
  hasWaitsIn(sessionId: string): boolean {
    return this.bySession.has(sessionId);
  }

  /** Reads the stored responses of these inputs and ends the waits that have one. Never throws. */
  async recheck(inputIds: string[]): Promise<void> {
    const open = inputIds.filter((id) => this.waiters.has(id));
    if (open.length === 0) return;
    try {
      const responses = await this.store.readResponses(
        open.map((inputId) => ({
          inputId,
          sessionId: this.waiters.get(inputId)?.[0]?.sessionId ?? "",
        })),
      );
      open.forEach((inputId, i) => {
        const response = responses[i];
        if (response) this.settle([inputId], response);
      });
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, "could not read responses; retrying later");
    }
  }

  /** Stops the safety sweep. */
  close(): void {
    clearInterval(this.sweep);
  }

  private add(inputId: string, waiter: Waiter): void {
    this.waiters.set(inputId, [...(this.waiters.get(inputId) ?? []), waiter]);
    const ids = this.bySession.get(waiter.sessionId) ?? new Set<string>();
    ids.add(inputId);
    this.bySession.set(waiter.sessionId, ids);
  }

  private remove(inputId: string, waiter: Waiter): boolean {
    const list = this.waiters.get(inputId);
    if (!list?.includes(waiter)) return false;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length > 0) {
      this.waiters.set(inputId, rest);
      return true;
    }
    this.waiters.delete(inputId);
    const ids = this.bySession.get(waiter.sessionId);
    ids?.delete(inputId);
    if (ids?.size === 0) this.bySession.delete(waiter.sessionId);
    return true;
  }
}

/** The input ids of a responses-channel message (a JSON array); nothing for anything else. */
export function parseIds(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}
