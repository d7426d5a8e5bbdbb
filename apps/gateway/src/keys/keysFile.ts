import { readFileSync } from "node:fs";
import { YiemError } from "@yiem/core";
import { z } from "zod";
import { type GatewayKey, SCOPES } from "./gatewayKey.js";

/** Requests per minute of a key whose entry names none. */
export const DEFAULT_REQUESTS_PER_MINUTE = 600;

/** Runs at once of a key whose entry names none. */
export const DEFAULT_RUNS_AT_ONCE = 16;

/**
 * One line of the keys file: a key's name (letters, digits, `.`, `_`, `-`: it becomes part of
 * Redis keys and of `by`), the hash of the key (`hashApiKey`), its scopes, agents, sessions
 * and limits. `yiem keys create` prints one.
 */
export const keyEntrySchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "1–64 letters, digits, '.', '_' or '-'"),
    hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, "sha256:<64 hex digits>"),
    scopes: z.array(z.enum(SCOPES as [string, ...string[]])).min(1),
    agents: z.array(z.string().min(1)).default(["*"]),
    sessions: z.enum(["own", "all"]).default("own"),
    requestsPerMinute: z.int().positive().default(DEFAULT_REQUESTS_PER_MINUTE),
    runsAtOnce: z.int().positive().default(DEFAULT_RUNS_AT_ONCE),
  })
  .strict();

/** The keys file could not be used: names the file, the line and the field. Terminal. */
export class KeysFileError extends YiemError {
  override name = "KeysFileError";
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`YIEM_API_KEYS ${file}: ${problem}`);
  }
}

/** The line that says, on purpose, that the keys file serves no key. */
export const NO_KEYS_LINE = "[]";

/**
 * The keys of the keys file `file`: JSON Lines, one entry (`keyEntrySchema`) per line; blank
 * lines and lines starting with `#` are skipped. A file without any entry is refused (read
 * while it was being written: a truncate-then-write, a half-copied file) unless it says so on
 * purpose with a line `[]` (`NO_KEYS_LINE`): then no key is served. Throws `KeysFileError`
 * naming the line and field of the first bad entry, for a name or hash used twice, and for a
 * file without entries or `[]`.
 */
export function loadKeysFile(file: string): GatewayKey[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new KeysFileError(file, (err as Error).message);
  }
  const keys: GatewayKey[] = [];
  let noKeysOnPurpose = false;
  text.split("\n").forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    if (trimmed === NO_KEYS_LINE) noKeysOnPurpose = true;
    else keys.push(readEntry(file, index + 1, trimmed));
  });
  if (keys.length === 0 && !noKeysOnPurpose) {
    throw new KeysFileError(
      file,
      `has no key (${text.trim() === "" ? "empty" : "only comments"}); to serve no key on purpose, write a line ${NO_KEYS_LINE}`,
    );
  }
  rejectDuplicates(file, keys);
  return keys;
}

/** One entry of line `lineNumber`. */
function readEntry(file: string, lineNumber: number, line: string): GatewayKey {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new KeysFileError(file, `line ${lineNumber}: not JSON`);
  }
  const parsed = keyEntrySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "(entry)";
    throw new KeysFileError(file, `line ${lineNumber}: ${field}: ${issue?.message ?? "invalid"}`);
  }
  const entry = parsed.data;
  return { ...entry, scopes: new Set(entry.scopes) } as GatewayKey;
}

function rejectDuplicates(file: string, keys: GatewayKey[]): void {
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const key of keys) {
    if (names.has(key.name)) throw new KeysFileError(file, `key name "${key.name}" is used twice`);
    if (hashes.has(key.hash))
      throw new KeysFileError(file, `key "${key.name}": its hash is used twice`);
    names.add(key.name);
    hashes.add(key.hash);
  }
}
