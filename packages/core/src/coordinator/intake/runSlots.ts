/**
 * One taken slot; `release` is idempotent, so a slot handed from owner to owner frees once.
 * `lend` gives it to other work while its run waits outside the process (its turn under a
 * shared provider limit): the returned function takes it back, even past the capacity, since
 * the run must go on. A slot released while lent frees nothing more.
 */
export interface Slot {
  release(): void;
  /**
   * Lends the slot while its run waits; returns the function that takes it back (idempotent).
   * When the coordinator lends as many slots as it may (`RunSlots.lendCapacity`), the slot is
   * kept and the returned function does nothing.
   */
  lend(): () => void;
}

/** How many runs may wait with a lent slot, per slot: a waiting run costs a few kilobytes. */
export const LENT_SLOTS_PER_SLOT = 8;

/**
 * Counts the sessions a coordinator runs at once. A slot is taken before a job is fetched
 * (so a coordinator only takes work it can start) and handed to the session that job starts;
 * a job that only waits for a session run elsewhere gives its slot back at once. A run
 * waiting for its turn under a shared limit lends its slot (`Slot.lend`), up to `lendCapacity`
 * at once, so one tenant's runs waiting at a limit do not keep another's from starting.
 */
export class RunSlots {
  private used = 0;
  private lent = 0;
  private readonly waiting: Array<() => void> = [];
  /** The most slots lent at once. */
  readonly lendCapacity: number;

  constructor(
    readonly capacity: number,
    lendCapacity = capacity * LENT_SLOTS_PER_SLOT,
  ) {
    this.lendCapacity = lendCapacity;
  }

  /** Slots lent now (their runs wait at a limit). */
  lentNow(): number {
    return this.lent;
  }

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

  /** Frees one used slot: to the first waiter, or back to the count. */
  private free(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.used--;
  }

  private slot(): Slot {
    let state: "held" | "lent" | "released" = "held";
    return {
      release: () => {
        if (state === "held") this.free();
        else if (state === "lent") this.lent--;
        state = "released";
      },
      lend: () => {
        if (state !== "held" || this.lent >= this.lendCapacity) return () => undefined;
        state = "lent";
        this.lent++;
        this.free();
        return () => {
          if (state !== "lent") return;
          state = "held";
          this.lent--;
          this.used++; // past the capacity if need be: the run goes on
        };
      },
    };
  }
}
