import { SETTINGS } from "../settings/catalogue.js";

/** How many events a session's replay stream keeps (approximately). */
export const DEFAULT_STREAM_LENGTH = 10_000;

/**
 * How a session's replay stream is capped: at about `maxLength` events and at `maxBytes`
 * bytes of event JSON; past either, the oldest events are trimmed (the newest always stays).
 */
export interface StreamCaps {
  maxLength: number;
  maxBytes: number;
}

/** The caps of a stream with `maxBytes` (default: `YIEM_EVENT_STREAM_MAX_BYTES`'s) and the default length. */
export function streamCaps(maxBytes = SETTINGS.eventStreamMaxBytes.default): StreamCaps {
  return { maxLength: DEFAULT_STREAM_LENGTH, maxBytes };
}
