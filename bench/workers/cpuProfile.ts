import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/**
 * Starts a CPU profile of this process when `BENCH_CPU_PROF_DIR` is set (a diagnostic: the
 * workers are spawned without Node flags). Returns what writes it to
 * `<dir>/<name>.cpuprofile` (a no-op when profiling is off).
 */
export async function startCpuProfile(name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  if (!dir) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}
