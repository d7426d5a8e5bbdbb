/**
 * Messages on `<prefix>:control`, heard by every coordinator and worker: the abort of a
 * session's open run, and a worker's announcement that the tools it serves changed (its first
 * announcement included), so coordinators read the registry at once instead of at their next
 * periodic read.
 */
export type ControlMessage =
  | { type: "abort"; sessionId: string }
  | { type: "toolsChanged"; workerId: string };

/** Parses a control message; nothing for anything else. */
export function parseControlMessage(text: string): ControlMessage | undefined {
  try {
    const value = JSON.parse(text) as ControlMessage;
    if (value.type === "abort" && typeof value.sessionId === "string") return value;
    if (value.type === "toolsChanged" && typeof value.workerId === "string") return value;
    return undefined;
  } catch {
    return undefined;
  }
}
