/** Starts the `/healthz` prober (`bench/workers/healthProbe.ts`) and reads its probes. */
import type { TestProcess } from "@yiem/testing";
import { sourceCommand, spawnCommand } from "../../test/support/processes.js";

/** One `/healthz` probe: its latency and whether it answered 2xx. */
export interface Probe {
  ms: number;
  ok: boolean;
  /** The age of the coordinator's last main-loop heartbeat, as the answer reports it (ms). */
  silentMs?: number;
}

/** A `/healthz` prober running in its own process. */
export interface HealthProbe {
  /** The probes so far that started in [`fromMs`, `toMs`] (monotonic clock). */
  probesIn(fromMs: number, toMs: number): Probe[];
  /** Stops it (again: nothing). */
  stop(): Promise<void>;
}

/** Probes `url` every `intervalMs` from a process of its own until stopped. */
export async function startHealthProbe(url: string, intervalMs: number): Promise<HealthProbe> {
  const child: TestProcess = spawnCommand(sourceCommand("bench/workers/healthProbe.ts"), {
    BENCH_PROBE_URL: url,
    BENCH_PROBE_INTERVAL_MS: String(intervalMs),
  });
  await child.waitForLine((line) => line.includes('"probe ready"'), 90_000);
  return {
    probesIn(fromMs, toMs) {
      return child.lines
        .filter((line) => line.startsWith('{"probe"'))
        .map((line) => (JSON.parse(line) as { probe: Probe & { atMs: number } }).probe)
        .filter((p) => p.atMs >= fromMs && p.atMs <= toMs);
    },
    stop: () => child.stop(2000),
  };
}
