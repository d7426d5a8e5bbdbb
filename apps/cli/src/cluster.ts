import type { SettingsOf, SettingsSource, YiemClient } from "@yiem/core/client";
import { CliError, EXIT } from "./errors.js";

/**
 * `@yiem/core/client`, loaded on first use: Redis' client is what makes the CLI slow to start,
 * and `yiem --help` or `--version` never needs it.
 */
function loadCore() {
  return import("@yiem/core/client");
}

/** A client for the cluster the environment names (`REDIS_URL`, `YIEM_PREFIX`). */
export interface ClusterSession {
  config: SettingsOf<"cli">;
  client: YiemClient;
  /** Closes the client; never hangs longer than a second. */
  close(): Promise<void>;
}

/**
 * Reads the CLI's settings from `env` (this process's environment when unset) and opens a
 * `YiemClient`. A malformed variable is a `ConfigError` naming it (exit code 2).
 */
export async function openCluster(env?: SettingsSource): Promise<ClusterSession> {
  const { readSettings, redisTargetOf, YiemClient } = await loadCore();
  const config = readSettings("cli", env);
  const client = new YiemClient({
    redis: redisTargetOf(config),
    prefix: config.prefix,
    shards: config.shards,
    maxInputBytes: config.maxInputBytes,
  });
  const close = async () => {
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 1000);
    });
    await Promise.race([client.close().catch(() => undefined), giveUp]);
    clearTimeout(timer);
  };
  return { config, client, close };
}

/** Runs `action` with a client for the environment's cluster, and closes it afterwards. */
export async function withCluster<T>(
  env: SettingsSource | undefined,
  action: (cluster: ClusterSession) => Promise<T>,
): Promise<T> {
  const cluster = await openCluster(env);
  try {
    return await action(cluster);
  } finally {
    await cluster.close();
  }
}

/** What one look at a session in Redis finds. */
export interface SessionProbe {
  /** The sequence number of its latest event (0 for a new session). */
  latestSeq: number;
  /** True while a coordinator holds the session (it is working on it). */
  held: boolean;
}

/**
 * Looks at a session on a short-lived connection of its own: its latest event's sequence
 * number (read before a send, so the events that follow can be told from the ones already
 * there) and whether a coordinator holds it. Fails fast with `RedisUnavailableError`.
 */
export async function probeSession(
  config: SettingsOf<"cli">,
  sessionId: string,
): Promise<SessionProbe> {
  const core = await loadCore();
  const { clusterKeys, connectRedis, describeRedisTarget, latestSeq, redisTargetOf } = core;
  const { keyLayoutOf, RedisUnavailableError } = core;
  const target = redisTargetOf(config);
  const redis = connectRedis(target, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: () => null,
  });
  let firstError: unknown;
  redis.on("error", (err: unknown) => {
    firstError ??= err; // "connect ECONNREFUSED …" rather than connect()'s "Connection is closed."
  });
  try {
    await redis.connect();
    const keys = clusterKeys(config.prefix, keyLayoutOf(target, config.shards));
    const [seq, held] = await Promise.all([
      latestSeq(redis, keys, sessionId),
      redis.exists(keys.lease(sessionId)),
    ]);
    return { latestSeq: seq, held: held === 1 };
  } catch (err) {
    throw new RedisUnavailableError(describeRedisTarget(target), firstError ?? err);
  } finally {
    redis.disconnect();
  }
}

/**
 * Fails with `unknown session <id>` (exit code 2) unless the cluster knows the session: a
 * stored transcript or events, or a request for it waiting for a coordinator.
 */
export async function expectKnownSession(client: YiemClient, sessionId: string): Promise<void> {
  if (!(await client.hasSession(sessionId)))
    throw new CliError(`unknown session ${sessionId}`, EXIT.setup);
}
