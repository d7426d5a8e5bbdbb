/** Messages on `<prefix>:control`, heard by every coordinator and worker. */
export type ControlMessage = { type: "abort"; sessionId: string };

/** Parses a control message; nothing for anything else. */
export function parseControlMessage(text: string): ControlMessage | undefined {
  try {
    const value = JSON.parse(text) as ControlMessage;
    return value.type === "abort" && typeof value.sessionId === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
