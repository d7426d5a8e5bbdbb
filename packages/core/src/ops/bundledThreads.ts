/**
 * The worker threads a bundled app (`scripts/bundleApps.ts`) carries as one CommonJS file each,
 * beside its bundle: the heartbeat's (`aliveBeatThread`) and the coordinator's front door
 * (`frontDoorThread`). A thread started from its file resolves, reads and links no module one
 * by one (ioredis alone is some 60 files) and starts no ES module loader of its own: its boot
 * took about half the CPU (docs/PERFORMANCE.md, "Peers"). Outside a bundle (tsc's `dist`, the
 * TypeScript sources) nothing is registered and each thread starts from its module as before;
 * so does a thread whose file is not there (a bundle copied without it).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The threads a bundle carries. */
export type BundledThread = "aliveBeatThread" | "frontDoorThread";

const registered = new Map<BundledThread, URL>();

/**
 * Registers the files of the threads a bundle carries (its registration module calls this
 * before the app's code runs); a file that is not there is left out.
 *
 * @example registerBundledThreads({ aliveBeatThread: new URL("./aliveBeatThread.bundle.cjs", bundleURL) })
 */
export function registerBundledThreads(files: Partial<Record<BundledThread, URL>>): void {
  for (const [name, file] of Object.entries(files) as Array<[BundledThread, URL]>)
    if (existsSync(fileURLToPath(file))) registered.set(name, file);
}

/** The file of thread `name` in this process's bundle, if it runs from one. */
export function bundledThreadFile(name: BundledThread): URL | undefined {
  return registered.get(name);
}
