import { parseIds } from "../coordinator/intake/answerWaiters.js";
import { ResponseTimeoutError } from "../protocol/errors.js";
import { duplicateConnection, type RedisClient } from "../redis/redisConnection.js";
import type { AssistantMessage } from "../types/index.js";

/** Reads a stored response, if there is one yet. */
export type ReadResponse = (inputId: string) => Promise<AssistantMessage | undefined>;

/**
 * Waits for run responses over one shared subscription to the responses channel: each
 * announcement wakes the waiters of the input ids it names, which then read the stored
 * response (the truth). Each waiter also reads once a second, so a missed announcement (a
 * reconnect) only costs a second. One connection however many waits are open.
 */
export class ResponseWaiter {
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<unknown> | undefined;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly command: RedisClient,
    private readonly channel: string,
    private readonly read: ReadResponse,
  ) {}

  /** The response for `inputId`; rejects with `ResponseTimeoutError` after `timeoutMs`. */
  async wait(inputId: string, timeoutMs: number): Promise<AssistantMessage> {
    await this.subscribe();
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (outcome: () => void) => {
        done = true;
        clearInterval(poll);
        clearTimeout(timer);
        this.waiters.get(inputId)?.delete(check);
        outcome();
      };
      const check = () => {
        this.read(inputId).then(
          (response) => {
            if (response && !done) finish(() => resolve(response));
          },
          () => undefined,
        );
      };
      const poll = setInterval(check, 1000);
      const timer = setTimeout(
        () => finish(() => reject(new ResponseTimeoutError(inputId, timeoutMs))),
        timeoutMs,
      );
      const set = this.waiters.get(inputId) ?? new Set();
      set.add(check);
      this.waiters.set(inputId, set);
      check();
    });
  }

  private subscribe(): Promise<unknown> {
    if (this.subscribed) return this.subscribed;
    const subscriber = duplicateConnection(this.command, {
      lazyConnect: false,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
    });
    subscriber.on("error", () => undefined);
    subscriber.on("message", (_channel, text: string) => {
      for (const id of parseIds(text)) for (const check of this.waiters.get(id) ?? []) check();
    });
    this.subscriber = subscriber;
    this.subscribed = subscriber.subscribe(this.channel);
    return this.subscribed;
  }

  /** Closes the shared subscription. */
  close(): void {
    this.subscriber?.disconnect();
  }
}
