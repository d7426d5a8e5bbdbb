/** One taken slot; `release` is idempotent, so a slot handed from owner to owner frees once. */
export interface Slot {
  release(): void;
}

/**
 * Counts the sessions a coordinator runs at once. A slot is taken before a job is fetched
 * (so a coordinator only takes work it can start) and handed to the session that job starts;
 * a job that only waits for a session run elsewhere gives its slot back at once.
 */
export class RunSlots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly capacity: number) {}

  /** A slot now, or `undefined` when all are taken. */
  tryTake(): Slot | undefined {
    if (this.used >= this.capacity) return undefined;
    this.used++;
    return this.slot();
  }

  /** Waits for a free slot. */
  async take(): Promise<Slot> {
    const slot = this.tryTake();
    if (slot) return slot;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.slot(); // `used` was kept for us by the release that woke us
  }

  /** Wakes every waiter (closing): each gets a slot it must release. */
  wakeAll(): void {
    for (const wake of this.waiting.splice(0)) {
      this.used++;
      wake();
    }
  }

  private slot(): Slot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiting.shift();
        if (next) next();
        else this.used--;
      },
    };
  }
}
