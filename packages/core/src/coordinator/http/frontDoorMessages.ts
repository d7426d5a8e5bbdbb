/** Messages between the main thread and the front door thread (`frontDoorThread.ts`). */

/** Main thread → front door: a heartbeat with the facts `/healthz` shows, or the order to close. */
export type FrontDoorMessage =
  | { kind: "beat"; at: number; health: Record<string, unknown> }
  | { kind: "close" };

/** Front door → main thread: it listens (on `port`), could not, or has closed. */
export type ThreadMessage =
  | { kind: "listening"; port: number }
  | { kind: "failed"; inUse: boolean; message: string }
  | { kind: "closed" };
