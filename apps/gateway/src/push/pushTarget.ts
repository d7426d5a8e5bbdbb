/**
 * Why a push notification webhook URL is refused: push is off (no host allowed), the URL is
 * not an http(s) URL without credentials, or its host is not one the gateway allows.
 */
export class PushTargetError extends Error {
  override name = "PushTargetError";
}

/** A host an operator allows (`YIEM_A2A_PUSH_HOSTS`): its name, and its port when it names one. */
interface AllowedHost {
  hostname: string;
  port?: string;
}

/** The allowed hosts of `entries` as a URL would name them (lowercase, IPs in their usual form). */
function allowedHostsOf(entries: readonly string[]): AllowedHost[] {
  return entries.flatMap((entry) => {
    try {
      const url = new URL(`http://${entry.trim()}`);
      return [{ hostname: url.hostname, ...(url.port ? { port: url.port } : {}) }];
    } catch {
      return [];
    }
  });
}

/** The port `url` reaches (its default one when it names none). */
function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/**
 * `text` as a push notification webhook URL the gateway may POST to, else `PushTargetError`
 * saying why: push is off when `allowed` (`YIEM_A2A_PUSH_HOSTS`) is empty; the URL must be
 * `http:` or `https:`, name no user or password, and its host (as WHATWG URL parsing
 * normalizes it: `0x7f.1` and `2130706433` are `127.0.0.1`) must be an allowed host (and its
 * port the allowed one, when the entry names a port). Checked when a config is set and again
 * before each delivery; redirects are never followed (`deliverPush`), so an allowed host
 * cannot send a notification on to another.
 *
 * @example checkPushUrl("http://169.254.169.254/latest", ["hooks.example"]) // throws
 */
export function checkPushUrl(text: string, allowed: readonly string[]): URL {
  const hosts = allowedHostsOf(allowed);
  if (hosts.length === 0) {
    throw new PushTargetError(
      "push notifications are off on this gateway: YIEM_A2A_PUSH_HOSTS names no webhook host",
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PushTargetError(`url: not a URL: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PushTargetError(`url: ${url.protocol} is not http: or https:`);
  }
  if (url.username || url.password) {
    throw new PushTargetError("url: a webhook URL may not carry a user or password");
  }
  const port = portOf(url);
  const fits = hosts.some((h) => h.hostname === url.hostname && (!h.port || h.port === port));
  if (!fits) {
    throw new PushTargetError(
      `url: host ${url.host} is not allowed for push notifications (YIEM_A2A_PUSH_HOSTS)`,
    );
  }
  return url;
}
