import { fileURLToPath } from "node:url";
import {
  type ClusterLaunch,
  spawnCommand as spawnCommandIn,
  spawnTypeScript,
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

/**
 * Runs a TypeScript entry point of the repo (`apps/.../main.ts`) with tsx as a real child
 * process (workspace packages from their sources), with `env` on top of this process's
 * environment.
 */
export function spawnApp(entry: string, env: Record<string, string>): TestProcess {
  return spawnTypeScript(entry, env, { cwd: repoRoot, conditions: ["yiem-source"] });
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
