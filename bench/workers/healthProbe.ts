/**
 * A `/healthz` prober in a process of its own, so that the benchmark process's event loop (busy
 * with the scripted model server and the completions) does not inflate what it measures.
 * Probes `BENCH_PROBE_URL` one request after another, each `BENCH_PROBE_INTERVAL_MS` after the
 * previous one started (at once when that one took longer), and prints one JSON line per probe:
 * `{"probe":{"atMs":<monotonic start>,"ms":<latency>,"ok":<2xx>}}`. Stops on SIGTERM.
 */
import { monotonicMs, sleep } from "../sampling/clock.js";

/** How long one probe may take before it counts as failed. */
const PROBE_TIMEOUT_MS = 10_000;

function readEnv(): { url: string; intervalMs: number } {
  const { BENCH_PROBE_URL, BENCH_PROBE_INTERVAL_MS } = process.env;
  if (!BENCH_PROBE_URL) throw new Error("BENCH_PROBE_URL is required");
  return { url: BENCH_PROBE_URL, intervalMs: Number(BENCH_PROBE_INTERVAL_MS ?? 50) };
}

/**
 * One GET of `url`, body read; its latency (ms), whether it answered 2xx, and the age of the
 * coordinator's last main-loop heartbeat the answer reports (`eventLoopSilentMs`), if any.
 */
async function probeOnce(url: string): Promise<{ ms: number; ok: boolean; silentMs?: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = await response.text();
    const ms = performance.now() - started;
    const silentMs = silenceOf(body);
    return { ms, ok: response.ok, ...(silentMs === undefined ? {} : { silentMs }) };
  } catch {
    return { ms: performance.now() - started, ok: false };
  }
}

/** `eventLoopSilentMs` of a `/healthz` body, when it has one. */
function silenceOf(body: string): number | undefined {
  try {
    const value = (JSON.parse(body) as { eventLoopSilentMs?: unknown }).eventLoopSilentMs;
    return typeof value === "number" ? value : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const { url, intervalMs } = readEnv();
  let stopping = false;
  process.on("SIGTERM", () => {
    stopping = true;
  });
  console.log(JSON.stringify({ msg: "probe ready" }));
  while (!stopping) {
    const atMs = monotonicMs();
    const probe = await probeOnce(url);
    console.log(JSON.stringify({ probe: { atMs, ...probe } }));
    const { ms } = probe;
    await sleep(Math.max(0, intervalMs - ms));
  }
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(`health probe failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
