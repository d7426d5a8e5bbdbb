import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { RedisClient } from "./redisConnection.js";

/**
 * The folder of Yiem's Lua scripts, one per file, each with a header naming its `KEYS[i]`
 * and `ARGV[i]`. Found from the package root, so the sources and the compiled `dist` read
 * the same files (the image ships this folder beside `dist`). A `<name>.lib.lua` file is no
 * script: it holds Lua functions that scripts share, pasted where a script has the line
 * `-- @include <name>` (never its first line, which is the script's shebang).
 *
 * A script's first line declares its flags (Redis 7): `#!lua` for one that may write, which
 * Redis refuses as a whole while it is out of memory (never a part of it), `#!lua
 * flags=no-writes` for a read, `#!lua flags=allow-oom` for the few that must run then (they
 * store nothing new, or they keep a tool job's finished marker). docs/RELIABILITY.md, "Redis
 * out of memory", lists them.
 */
const SCRIPTS_DIR = new URL("../../src/redis/scripts/", import.meta.url);

/**
 * The run features' folders (`src/features/<feature>/`): a feature's own scripts are in its
 * `scripts/` folder, loaded as those of `SCRIPTS_DIR` are (they may include its libraries).
 */
const FEATURES_DIR = new URL("../../src/features/", import.meta.url);

const LIBRARY_SUFFIX = ".lib.lua";
const INCLUDE_LINE = /^-- @include (\w+)$/gm;

/** A script's text with each `-- @include <name>` line replaced by `<name>.lib.lua`. */
function withIncludes(lua: string): string {
  return lua.replace(INCLUDE_LINE, (_line, name: string) =>
    readFileSync(new URL(`${name}${LIBRARY_SUFFIX}`, SCRIPTS_DIR), "utf8"),
  );
}

/** A script as loaded: `name-N.lua` has N keys; `name.lua` takes its key count first. */
interface ScriptFile {
  command: string;
  numberOfKeys?: number;
  lua: string;
}

/** A script's reply: integers, strings and nested arrays of them. */
export type ScriptReply = Array<number | string>;

type Script<Reply> = (...keysThenArgs: Array<string | number>) => Promise<Reply>;

/**
 * Every Yiem script as a command of the connection (`yiem` + the file's name). Arguments are
 * the script's keys, then its arguments, in the order of its header; `yiemFinishRun` and
 * `yiemAddPlainJobs` take the number of keys first.
 */
export interface YiemScripts {
  yiemRenewLease: Script<number>;
  yiemReleaseLeaseIfIdle: Script<number>;
  yiemReleaseLease: Script<number>;
  yiemEnqueueInput: Script<ScriptReply>;
  yiemStartRun: Script<ScriptReply>;
  yiemDrainInputs: Script<ScriptReply>;
  yiemAppendMessage: Script<number>;
  yiemAppendMessages: Script<number>;
  yiemAppendHandoff: Script<number>;
  yiemFinishRun: Script<number>;
  yiemRequestApproval: Script<number>;
  yiemDecideApproval: Script<ScriptReply>;
  yiemParkRun: Script<number>;
  yiemMarkRunAborted: Script<number>;
  yiemAbortChildRun: Script<number>;
  yiemReserveBudget: Script<ScriptReply>;
  yiemTakeAbortRequest: Script<number>;
  yiemMarkRunning: Script<number>;
  yiemPublishEvent: Script<number>;
  yiemPublishLiveEvent: Script<number>;
  yiemPublishEvents: Script<number[]>;
  yiemSessionWrites: Script<Array<number | ScriptReply>>;
  yiemRecordToolEnd: Script<number>;
  yiemCompleteJob: Script<number>;
  yiemTakeJob: Script<number | TakenJobReply>;
  yiemForgetApprovals: Script<string[] | number>;
  yiemSaveWrittenTool: Script<[number, string]>;
  yiemLoadWrittenTools: Script<[string, string[]]>;
  yiemClaimRequestSession: Script<string>;
  yiemBeatAlive: Script<number>;
  yiemFindDeadLives: Script<[string[], string[]]>;
  yiemBuryDeadLives: Script<number>;
  yiemReleaseDeadLocks: Script<string[]>;
  yiemReleaseLostTakes: Script<string[]>;
  yiemTakeOverLease: Script<number>;
  yiemAdmitModelCall: Script<number>;
  yiemSettleModelCall: Script<number>;
  yiemReserveTenantDay: Script<ScriptReply>;
  yiemTenantRunSlot: Script<number>;
  yiemAddPlainJobs: Script<number | number[]>;
}

/**
 * `takeJob-8.lua`'s reply when it answered as BullMQ's take: the job's hash as `HGETALL` gives
 * it (0: none), its id (0: none), 0, the next delayed job's time (0: none), 1 when more jobs
 * wait, and the jobs taken after the first (hash, id, hash, id, ...).
 */
export type TakenJobReply = [
  string[] | 0,
  string | 0,
  number,
  number,
  0 | 1,
  Array<string[] | string>,
];

/** A connection with Yiem's scripts defined on it. */
export type ScriptedRedis<R extends RedisClient = RedisClient> = R & YiemScripts;

let loaded: ScriptFile[] | undefined;

/** The folders scripts are read from: the shared one, then each feature's `scripts/`. */
function scriptFolders(): URL[] {
  if (!existsSync(FEATURES_DIR)) return [SCRIPTS_DIR];
  const features = readdirSync(FEATURES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => new URL(`${entry.name}/scripts/`, FEATURES_DIR))
    .filter((folder) => existsSync(folder));
  return [SCRIPTS_DIR, ...features];
}

/** The scripts of one folder. */
function readFolder(folder: URL): ScriptFile[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith(".lua") && !file.endsWith(LIBRARY_SUFFIX))
    .map((file) => {
      const match = /^(\w+?)(?:-(\d+))?\.lua$/.exec(file);
      if (!match?.[1]) throw new Error(`unexpected script file name: ${file}`);
      const name = match[1];
      return {
        command: `yiem${name[0]?.toUpperCase()}${name.slice(1)}`,
        numberOfKeys: match[2] === undefined ? undefined : Number(match[2]),
        lua: withIncludes(readFileSync(new URL(file, folder), "utf8")),
      };
    });
}

/** Reads the script files once per process. */
function readScripts(): ScriptFile[] {
  loaded ??= scriptFolders().flatMap(readFolder);
  return loaded;
}

/**
 * Defines every Yiem script on `redis` (once per connection) and returns it typed with them.
 * ioredis runs each by EVALSHA, loading it on a node that lacks it, single Redis or cluster.
 *
 * @example await withScripts(redis).yiemRenewLease(keys.lease(sessionId), token, 10_000)
 */
export function withScripts<R extends RedisClient>(redis: R): ScriptedRedis<R> {
  const scripted = redis as ScriptedRedis<R>;
  if (typeof scripted.yiemRenewLease === "function") return scripted;
  for (const script of readScripts()) {
    redis.defineCommand(script.command, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  return scripted;
}
