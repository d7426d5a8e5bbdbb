import { fileURLToPath } from "node:url";
import { spawnCommand as spawnCommandIn, spawnTypeScript, type TestProcess } from "@yiem/testing";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

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
