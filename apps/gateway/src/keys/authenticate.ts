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
  return {
    authenticate: () => local,
    byName: (name) => (name === local.name ? local : undefined),
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
  const replace = (next: GatewayKey[]) => {
    byHash = new Map(next.map((key) => [key.hash, key]));
    byName = new Map(next.map((key) => [key.name, key]));
  };
  replace(keys);
  return {
    replace,
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
