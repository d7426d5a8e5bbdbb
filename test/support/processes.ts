import { fileURLToPath } from "node:url";
import {
  type ClusterLaunch,
  spawnCommand as spawnCommandIn,
  type TestProcess,
} from "@yiem/testing";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/**
 * How test clusters and gateways start the apps: compiled, as the Dockerfile runs them
 * (`test/support/buildOnce.ts` builds them first), unless `YIEM_TEST_LAUNCH=source`. A process
 * started from sources compiles them with tsx as it boots, about a second of CPU more per
 * process: hundreds of starts made the suite slower and its processes slower to get ready.
 */
export const testLaunch: ClusterLaunch =
  process.env.YIEM_TEST_LAUNCH === "source" ? "source" : "compiled";

/** The apps deployed as one bundled file (`scripts/bundleApps.ts`): their `main.bundle.js`. */
const BUNDLED_MAIN = /^apps\/(coordinator|tool-worker|gateway)\/src\/main\.ts$/;

/**
 * The exec-form command that runs an app's entry point (`apps/<app>/src/main.ts`) as
 * `testLaunch` says: compiled as deployed (`node apps/<app>/dist/main.bundle.js` for the
 * bundled apps, else `dist/main.js`; `npm run build` makes both) or from its sources with tsx
 * (workspace packages from their sources too). `node` is this Node.
 */
export function appCommand(entry: string): string[] {
  if (testLaunch === "source") return sourceCommand(entry);
  const target = BUNDLED_MAIN.test(entry) ? "$1/dist/$2.bundle.js" : "$1/dist/$2.js";
  const compiled = entry.replace(/^(apps\/[^/]+)\/src\/(.+)\.ts$/, target);
  if (compiled === entry) throw new Error(`not an app's TypeScript entry point: ${entry}`);
  return [process.execPath, compiled];
}

/**
 * The exec-form command that runs a TypeScript file from its sources with tsx, the workspace
 * packages from theirs: for a script that is no app (a bench's worker, a test's helper
 * process), which has no compiled entry point.
 */
export function sourceCommand(entry: string): string[] {
  return [process.execPath, "--conditions=yiem-source", "--import", "tsx", entry];
}

/**
 * Runs an app's entry point (`apps/<app>/src/main.ts`) as a real child process, compiled or
 * from its sources (`appCommand`), with `env` on top of this process's environment.
 */
export function spawnApp(entry: string, env: Record<string, string>): TestProcess {
  return spawnCommandIn(appCommand(entry), env, { cwd: repoRoot });
}

/**
 * Runs `command` (an exec-form command line, as a Dockerfile `CMD` or a compose `command`
 * has it; `node` means this Node) from `cwd` (default: the repository root) as a real child
 * process, with `env` on top of this process's environment. The child's pid is the
 * command's own.
 */
export function spawnCommand(
  command: string[],
  env: Record<string, string>,
  cwd: string = repoRoot,
): TestProcess {
  return spawnCommandIn(command, env, { cwd });
}
