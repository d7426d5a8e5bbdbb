import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { repoRoot } from "../support/processes.js";

/** The podman settings of this machine (runc, cgroupfs, no default ulimits): containers.conf. */
export const containersConf = fileURLToPath(new URL("./containers.conf", import.meta.url));

/** What a finished command printed and its exit code. */
export interface CommandResult {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Runs a command to its end under CONTAINERS_CONF, in the repository's root; never throws on its exit code. */
export function runCommand(command: string[], cwd: string = repoRoot): Promise<CommandResult> {
  const [file = "", ...args] = command;
  const child = spawn(file, args, {
    cwd,
    env: { ...process.env, CONTAINERS_CONF: containersConf },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ ...out, code }));
  });
}

/** Runs `podman ARGS`; resolves with its trimmed stdout, rejects with its stderr when it fails. */
export async function podman(args: string[]): Promise<string> {
  const result = await runCommand(["podman", ...args]);
  if (result.code !== 0) {
    throw new Error(`podman ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
  }
  return result.stdout.trim();
}

/** Runs `podman ARGS` and gives its result whatever the exit code (e.g. an exec that should fail). */
export function tryPodman(args: string[]): Promise<CommandResult> {
  return runCommand(["podman", ...args]);
}

/** Builds an image; the seconds it took, for the test's report. */
export async function buildImage(
  tag: string,
  context: string,
  buildArgs: Record<string, string>,
): Promise<number> {
  const started = Date.now();
  const args = Object.entries(buildArgs).flatMap(([name, value]) => [
    "--build-arg",
    `${name}=${value}`,
  ]);
  await podman(["build", "-t", tag, ...args, context]);
  return (Date.now() - started) / 1000;
}

/** The containers' names whose name starts with `prefix`, running or not. */
export async function containersNamed(prefix: string): Promise<string[]> {
  const names = await podman(["ps", "-a", "--format", "{{.Names}}", "--filter", `name=^${prefix}`]);
  return names.split("\n").filter((name) => name !== "");
}

/** A container's exit code and whether it runs. */
export async function containerState(
  name: string,
): Promise<{ running: boolean; exitCode: number }> {
  const text = await podman([
    "inspect",
    "--format",
    "{{.State.Running}} {{.State.ExitCode}}",
    name,
  ]);
  const [running, exitCode] = text.split(" ");
  return { running: running === "true", exitCode: Number(exitCode) };
}
