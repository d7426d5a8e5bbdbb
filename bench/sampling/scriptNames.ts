/**
 * Names the Lua scripts a Redis server runs by their SHA-1: Yiem's (`packages/core`'s script
 * folders, with their `-- @include` lines pasted as `scripts.ts` does) and BullMQ's (the
 * commands BullMQ defines on a connection of its own), so an `EVALSHA` seen by `MONITOR`
 * reads as the script it runs.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { repoRoot } from "../../test/support/processes.js";

const CORE_SRC = join(repoRoot, "packages/core/src");
const SCRIPTS_DIR = join(CORE_SRC, "redis/scripts");
const INCLUDE_LINE = /^-- @include (\w+)$/gm;

/** SHA-1 of a script's text, as EVALSHA names it. */
function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

/** The folders Yiem's scripts are read from. */
function yiemScriptFolders(): string[] {
  const features = join(CORE_SRC, "features");
  const own = readdirSync(features, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(features, entry.name, "scripts"))
    .filter((folder) => existsSync(folder));
  return [SCRIPTS_DIR, ...own];
}

/** Yiem's scripts: SHA-1 → `yiem:<file>`. */
function nameYiemScripts(names: Map<string, string>): void {
  for (const folder of yiemScriptFolders()) {
    for (const file of readdirSync(folder)) {
      if (!file.endsWith(".lua") || file.endsWith(".lib.lua")) continue;
      const text = readFileSync(join(folder, file), "utf8").replace(
        INCLUDE_LINE,
        (_line, lib: string) => readFileSync(join(SCRIPTS_DIR, `${lib}.lib.lua`), "utf8"),
      );
      names.set(sha1(text), `yiem:${file}`);
    }
  }
}

/** The scripts ioredis keeps for a connection's defined commands. */
interface DefinedScripts {
  scriptsSet?: Record<string, { sha: string }>;
}

/** BullMQ's scripts: SHA-1 → `bullmq:<name>`, read from a queue's connection. */
async function nameBullmqScripts(connection: Redis, names: Map<string, string>): Promise<void> {
  const own = connection.duplicate();
  const queue = new Queue("scriptNames", { connection: own });
  try {
    const client = (await queue.client) as unknown as DefinedScripts;
    for (const [name, script] of Object.entries(client.scriptsSet ?? {})) {
      names.set(script.sha, `bullmq:${name}`);
    }
  } finally {
    await queue.close();
    own.disconnect();
  }
}

/**
 * Every script Yiem and BullMQ define, by SHA-1.
 *
 * @example (await readScriptNames(connection)).get(sha) // "yiem:finishRun.lua"
 */
export async function readScriptNames(connection: Redis): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  nameYiemScripts(names);
  await nameBullmqScripts(connection, names);
  return names;
}
