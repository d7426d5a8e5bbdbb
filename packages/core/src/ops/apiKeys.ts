import { createHash, randomBytes } from "node:crypto";

/** What starts every API key a gateway hands out (`createApiKey`), so a leaked one is recognisable. */
export const API_KEY_PREFIX = "yk_";

/**
 * The hash a gateway keys file (`YIEM_API_KEYS`) stores for `key`: `sha256:<hex>`. A key is
 * 32 random bytes, so a plain SHA-256 suffices (no salt or slow hash: nothing to guess).
 *
 * @example hashApiKey("yk_…") // "sha256:9f86d0…"
 */
export function hashApiKey(key: string): string {
  return `sha256:${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

/**
 * A new API key (`yk_` and 32 random bytes, base64url) with its hash (`hashApiKey`). Show the
 * key once to whoever will use it; store only the hash.
 */
export function createApiKey(): { key: string; hash: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, hash: hashApiKey(key) };
}
