/**
 * A user's client in a process of its own: on each `SIGUSR2`, `BENCH_SEND_COUNT` separate
 * `YiemClient.send` calls (each its own `queue.add`, all started at once, each to a new session),
 * then writes their run ids to `<BENCH_SEND_DIR>/batch-<n>.json` (a line of 2,000 ids would be
 * longer than one read of a pipe) and prints one JSON line
 * `{"sent":{"file":"…","ms":<from the signal to the last add>}}`. The benchmark watches the
 * answers itself (`QueueEvents`), so this process only sends. Stops on SIGTERM.
 *
 * Environment: `BENCH_REDIS_URL`, `BENCH_PREFIX`, `BENCH_SEND_COUNT`, `BENCH_SEND_INPUT`,
 * `BENCH_SEND_DIR`.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { YiemClient } from "@yiem/core";

interface SenderEnv {
  redis: string;
  prefix: string;
  count: number;
  input: string;
  dir: string;
}

function readEnv(): SenderEnv {
  const { BENCH_REDIS_URL, BENCH_PREFIX, BENCH_SEND_COUNT, BENCH_SEND_INPUT, BENCH_SEND_DIR } =
    process.env;
  if (!BENCH_REDIS_URL || !BENCH_PREFIX || !BENCH_SEND_COUNT || !BENCH_SEND_DIR)
    throw new Error(
      "BENCH_REDIS_URL, BENCH_PREFIX, BENCH_SEND_COUNT and BENCH_SEND_DIR are required",
    );
  return {
    redis: BENCH_REDIS_URL,
    prefix: BENCH_PREFIX,
    count: Number(BENCH_SEND_COUNT),
    input: BENCH_SEND_INPUT ?? "run both steps",
    dir: BENCH_SEND_DIR,
  };
}

/** Sends `count` requests at once, each with a `send` of its own; their run ids in order. */
async function sendAll(client: YiemClient, env: SenderEnv): Promise<string[]> {
  const sends = Array.from({ length: env.count }, () => client.send(env.input));
  return (await Promise.all(sends)).map(({ runId }) => runId);
}

async function main(): Promise<void> {
  const env = readEnv();
  const client = new YiemClient({ redis: env.redis, prefix: env.prefix });
  let batches = 0;
  process.on("SIGUSR2", () => {
    const started = performance.now();
    const file = join(env.dir, `batch-${++batches}.json`);
    sendAll(client, env)
      .then(async (runIds) => {
        const ms = performance.now() - started;
        await writeFile(file, JSON.stringify(runIds));
        console.log(JSON.stringify({ sent: { file, ms } }));
      })
      .catch((err: unknown) => console.log(JSON.stringify({ sendFailed: String(err) })));
  });
  process.on("SIGTERM", () => {
    client.close().finally(() => process.exit(0));
  });
  console.log(JSON.stringify({ msg: "sender ready" }));
}

main().catch((err: unknown) => {
  console.error(`session sender failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
