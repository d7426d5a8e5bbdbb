import type { IncomingMessage } from "node:http";
import { hashApiKey } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import { type GatewayKey, localKey } from "./gatewayKey.js";

/** Finds the key of a request: by the hash of its bearer token, or the local key without a keys file. */
export interface KeyRing {
  /** The request's key; throws `GatewayError` 401 without a known bearer token. */
  authenticate(req: IncomingMessage): GatewayKey;
  /** The key named `name`, if the keys file has it (the local key without a keys file). */
  byName(name: string): GatewayKey | undefined;
  /**
   * Fires when `key` is no longer served (taken out of the keys file, or its name given to
   * another hash): what ends the key's open streams. Never fires for the local key.
   */
  revocation(key: GatewayKey): AbortSignal;
}

/** A key ring read from a keys file, whose keys can be replaced while it serves (a reload). */
export interface FileKeyRing extends KeyRing {
  /** Serves `keys` from now on: a key no longer among them gets 401 on its next request. */
  replace(keys: GatewayKey[]): void;
  /** The names of the keys it serves now. */
  names(): string[];
}

/**
 * The key ring of `keys`, or, with `undefined` (no keys file, loopback only), one that lets
 * every request act as the local key. A token is looked up by its hash, so the gateway never
 * holds a key itself.
 */
export function createKeyRing(keys: GatewayKey[] | undefined): KeyRing {
  if (keys) return createFileKeyRing(keys);
  const local = localKey();
  const never = new AbortController().signal;
  return {
    authenticate: () => local,
    byName: (name) => (name === local.name ? local : undefined),
    revocation: () => never,
  };
}

/**
 * The key ring of the keys of a keys file (see `createKeyRing`), which `replace` swaps whole:
 * each request sees the old keys or the new ones, never a mix.
 *
 * @example const ring = createFileKeyRing(loadKeysFile(file)); ring.replace(loadKeysFile(file));
 */
export function createFileKeyRing(keys: GatewayKey[]): FileKeyRing {
  let byHash = new Map<string, GatewayKey>();
  let byName = new Map<string, GatewayKey>();
  /** One revocation per key (`<hash> <name>`) asked for, aborted when the key goes. */
  const revocations = new Map<string, AbortController>();
  const isServed = (hash: string, name: string) => byHash.get(hash)?.name === name;
  const replace = (next: GatewayKey[]) => {
    byHash = new Map(next.map((key) => [key.hash, key]));
    byName = new Map(next.map((key) => [key.name, key]));
    for (const [id, controller] of revocations) {
      const [hash = "", name = ""] = id.split(" ");
      if (isServed(hash, name)) continue;
      revocations.delete(id);
      controller.abort();
    }
  };
  replace(keys);
  return {
    replace,
    revocation(key) {
      const id = `${key.hash} ${key.name}`;
      let controller = revocations.get(id);
      if (!controller) {
        controller = new AbortController();
        if (isServed(key.hash, key.name)) revocations.set(id, controller);
        else controller.abort();
      }
      return controller.signal;
    },
    names: () => [...byName.keys()],
    byName: (name) => byName.get(name),
    authenticate(req) {
      const token = bearerToken(req);
      const key = token === undefined ? undefined : byHash.get(hashApiKey(token));
      if (!key) {
        throw new GatewayError(
          401,
          "unauthorized",
          token ? "unknown API key" : "missing bearer token",
        );
      }
      return key;
    },
  };
}

/** The token of `Authorization: Bearer <token>`, if the request has one. */
function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
