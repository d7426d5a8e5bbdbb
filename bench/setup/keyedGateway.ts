/**
 * A second compiled gateway on a gateway cluster (`gatewayCluster.ts`), serving a keys file of
 * its own, for scenarios that need keys (the cluster's own gateway has none: every request is
 * the local key, which no per-key cap applies to).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  makeKey,
  startGatewayProcess,
  type TestKey,
  writeKeysFile,
} from "../../test/gateway/support.js";
import type { GatewayCluster } from "./gatewayCluster.js";

/** A key of the keyed gateway: its name and secret. */
export interface BenchKey {
  name: string;
  secret: string;
}

/** The running keyed gateway. */
export interface KeyedGateway {
  url: string;
  pid: number;
  keys: Record<string, BenchKey>;
  /** The log lines it wrote so far (pino JSON). */
  lines(): readonly string[];
  close(): Promise<void>;
}

/**
 * Starts a compiled gateway against `cluster`'s Redis with a keys file holding one key per
 * entry of `keys` (name → the entry's fields: scopes, sessions, limits) and `env` on top of
 * the cluster gateway's settings.
 */
export async function startKeyedGateway(
  cluster: GatewayCluster,
  keys: Record<string, Record<string, unknown>>,
  env: Record<string, string>,
): Promise<KeyedGateway> {
  const made: TestKey[] = Object.entries(keys).map(([name, fields]) => makeKey(name, fields));
  const file = join(await mkdtemp(join(tmpdir(), "yiem-bench-keys-")), "keys.jsonl");
  await writeKeysFile(file, made);
  const gateway = await startGatewayProcess(
    {
      REDIS_URL: cluster.base.redis.url,
      YIEM_PREFIX: cluster.base.redis.prefix,
      YIEM_API_KEYS: file,
      LOG_LEVEL: "info",
    },
    env,
    { compiled: true },
  );
  return {
    url: gateway.url,
    pid: gateway.process.pid,
    keys: Object.fromEntries(made.map((key) => [key.name, { name: key.name, secret: key.secret }])),
    lines: () => gateway.process.lines,
    close: () => gateway.process.stop(10_000).then(() => undefined),
  };
}
