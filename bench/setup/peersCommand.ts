/**
 * `npm run bench -- --peers`: installs the peers (`npm ci --prefix bench/peers`, their own
 * lockfile, kept out of the root install) when their install is missing or older than the
 * lockfile, then runs `bench/peers/main.ts` in a network namespace of its own with loopback
 * only (`unshare --net`; `--map-root-user` when not root), because Restate's server checks
 * for a newer release over the network at every start. The peers' own processes are compiled
 * first (`bench/peers/tsconfig.processes.json`) and run with plain `node`. Afterwards it renders
 * `docs/PERFORMANCE.md` again with the peers section.
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../../test/support/processes.js";

const PEERS_DIR = join(repoRoot, "bench", "peers");

/** Runs `command` with inherited output; rejects unless it exits with 0. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: "inherit" });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}

/** Modification time of `path` in ms, or 0 when it does not exist. */
async function mtimeOf(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.mtimeMs,
    () => 0,
  );
}

/** Installs the peers unless their install is as new as their lockfile. */
async function installPeers(progress: (text: string) => void): Promise<void> {
  const installed = await mtimeOf(join(PEERS_DIR, "node_modules", ".package-lock.json"));
  if (installed >= (await mtimeOf(join(PEERS_DIR, "package-lock.json")))) return;
  progress("installing the peers (npm ci --prefix bench/peers)");
  await run("npm", ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund"]);
}

/** Compiles the peers' processes to `bench/peers/dist` (they run with plain `node`). */
async function compilePeers(progress: (text: string) => void): Promise<void> {
  progress("compiling the peers' processes (bench/peers/tsconfig.processes.json)");
  const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  await run(process.execPath, [tsc, "-p", join(PEERS_DIR, "tsconfig.processes.json")]);
}

/** The `unshare` arguments that run `node bench/peers/main.ts args` with loopback only. */
function namespacedCommand(args: string[]): string[] {
  const node = [
    process.execPath,
    "--conditions=yiem-source",
    "--import",
    "tsx",
    join(PEERS_DIR, "main.ts"),
    ...args,
  ];
  const quoted = node.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  const asRoot = process.getuid?.() === 0 ? [] : ["--map-root-user"];
  return [...asRoot, "--net", "sh", "-c", `ip link set lo up && exec ${quoted}`];
}

/** Installs the peers, runs them, and renders the document (through `render`). */
export async function runPeers(
  args: string[],
  progress: (text: string) => void,
  render: () => Promise<string>,
): Promise<void> {
  await installPeers(progress);
  await compilePeers(progress);
  await run("unshare", namespacedCommand(args)).catch((err: unknown) => {
    throw new Error(
      `the peers bench failed (see its output above; it runs under \`unshare --net\`, which needs root or unprivileged user namespaces): ${String(err)}`,
    );
  });
  progress(`wrote ${await render()} with the peers section`);
}
