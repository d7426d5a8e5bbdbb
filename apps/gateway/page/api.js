/**
 * The page's calls to the gateway: JSON requests with the key of this tab (sessionStorage,
 * never localStorage: it ends with the tab), and the session's events through an
 * event-stream token, since EventSource sends no headers.
 */

const KEY_ITEM = "yiem.key";

/** The key this tab uses ("" on a gateway without a keys file). */
export function readKey() {
  return sessionStorage.getItem(KEY_ITEM) ?? "";
}

/** Keeps `key` for this tab. */
export function saveKey(key) {
  sessionStorage.setItem(KEY_ITEM, key);
}

/** A failed call: the gateway's `{ error: { code, message } }` with the status. */
export class GatewayCallError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

/** Calls `method path` with the key and `body` as JSON; resolves to the answer's JSON, throws `GatewayCallError`. */
export async function callGateway(method, path, body) {
  const headers = { accept: "application/json" };
  const key = readKey();
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const error = json?.error ?? { code: "http", message: response.statusText };
    throw new GatewayCallError(response.status, error.code, error.message);
  }
  return json;
}

/**
 * Opens the events of `sessionId` as an EventSource (after a token for it), from the start:
 * the stored events replay, then live ones follow; EventSource itself reconnects with
 * Last-Event-ID. `onEvent` gets each event's parsed data.
 */
export async function openSessionEvents(sessionId, onEvent, onError) {
  const { url } = await callGateway(
    "POST",
    `/v1/sessions/${encodeURIComponent(sessionId)}/events/token`,
  );
  const source = new EventSource(url);
  source.onmessage = () => undefined;
  const handle = (message) => {
    try {
      onEvent(JSON.parse(message.data));
    } catch (err) {
      onError(err);
    }
  };
  for (const type of EVENT_TYPES) source.addEventListener(type, handle);
  source.onerror = () => onError(new Error("event stream interrupted; reconnecting"));
  return source;
}

/** The event types the gateway sends (`event:` of each server-sent event). */
const EVENT_TYPES = [
  "agentStart",
  "turnStart",
  "messageUpdate",
  "messageEnd",
  "turnEnd",
  "agentEnd",
  "toolExecStart",
  "toolExecUpdate",
  "toolExecEnd",
  "toolApprovalRequested",
  "toolApprovalDecided",
  "agentHandoff",
];
