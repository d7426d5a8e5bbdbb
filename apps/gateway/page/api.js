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
 * Follows the events of `sessionId` from the start: the stored events replay, then live ones
 * follow. An EventSource (after a token for it) reconnects by itself with Last-Event-ID; when
 * it gives up (its token expired, a gateway refused it) a new one opens with a new token
 * after the last event seen (`from=`), so no event is lost or repeated. `onEvent` gets each
 * event's parsed data; resolves to a handle whose `close()` stops following.
 */
export async function followSessionEvents(sessionId, { onEvent, onOpen, onError }) {
  let lastSeq = 0;
  let source;
  let closed = false;
  const handle = (message) => {
    if (message.lastEventId) lastSeq = Math.max(lastSeq, Number(message.lastEventId));
    try {
      onEvent(JSON.parse(message.data));
    } catch (err) {
      onError(err);
    }
  };
  const open = async () => {
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}/events/token`;
    const { url } = await callGateway("POST", path);
    if (closed) return;
    source = new EventSource(lastSeq > 0 ? `${url}&from=${lastSeq}` : url);
    for (const type of EVENT_TYPES) source.addEventListener(type, handle);
    source.onopen = onOpen;
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) {
        onError(new Error("event stream interrupted; reconnecting"));
        return;
      }
      onError(new Error("event stream closed; reopening"));
      setTimeout(() => open().catch(onError), 1000);
    };
  };
  await open();
  return {
    close() {
      closed = true;
      source?.close();
    },
  };
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
