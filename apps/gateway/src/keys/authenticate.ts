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

/**
 * The key ring of `keys`, or, with `undefined` (no keys file, loopback only), one that lets
 * every request act as the local key. A token is looked up by its hash, so the gateway never
 * holds a key itself.
 */
export function createKeyRing(keys: GatewayKey[] | undefined): KeyRing {
  if (!keys) {
    const local = localKey();
    return {
      authenticate: () => local,
      byName: (name) => (name === local.name ? local : undefined),
    };
  }
  const byHash = new Map(keys.map((key) => [key.hash, key]));
  const byName = new Map(keys.map((key) => [key.name, key]));
  return {
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
