/**
 * The workspace packages Yiem ships, and `npm pack` of them: shared by the install test
 * (test/deploy/packages.test.ts) and `npm run check:packages` (scripts/checkPackages.ts).
 */
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../support/processes.js";

const run = promisify(execFile);

/**
 * The folders of the packages that ship, dependencies first. Add a folder here and both the
 * install test and `check:packages` pack it.
 */
export const SHIPPED_PACKAGE_DIRS: readonly string[] = [
  "packages/core",
  "packages/tools",
  "packages/testing",
  "apps/coordinator",
  "apps/tool-worker",
  "apps/cli",
  "apps/gateway",
];

/** The fields of a package.json the checks read. */
export interface PackageManifest {
  name: string;
  version: string;
  exports?: unknown;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/** One packed package: its folder in the repo, its manifest and its tarball. */
export interface PackedPackage {
  dir: string;
  manifest: PackageManifest;
  /** Absolute path of the `.tgz`. */
  tarball: string;
  /** Every path inside the tarball, relative to the package root. */
  files: string[];
}

/** Reads the package.json of a workspace folder. */
export async function readManifest(dir: string): Promise<PackageManifest> {
  return JSON.parse(await readFile(join(repoRoot, dir, "package.json"), "utf8")) as PackageManifest;
}

/** What `npm pack --json` prints for one package. */
interface NpmPackEntry {
  name: string;
  filename: string;
  files: Array<{ path: string }>;
}

/**
 * Packs each folder of `dirs` (`npm pack`, the built `dist` as it is: run `npm run build`
 * first) into `destination`, in one npm process. Throws with npm's output when packing fails.
 */
export async function packPackages(
  dirs: readonly string[],
  destination: string,
): Promise<PackedPackage[]> {
  await mkdir(destination, { recursive: true });
  const workspaces = dirs.flatMap((dir) => ["--workspace", dir]);
  const args = ["pack", "--json", "--pack-destination", destination, ...workspaces];
  const { stdout } = await run("npm", args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }).catch(
    (err: Error & { stderr?: string }) => {
      throw new Error(`npm ${args.join(" ")} failed: ${err.stderr ?? err.message}`);
    },
  );
  const entries = JSON.parse(stdout) as NpmPackEntry[];
  return Promise.all(
    dirs.map(async (dir) => {
      const manifest = await readManifest(dir);
      const entry = entries.find((e) => e.name === manifest.name);
      if (!entry) throw new Error(`npm pack printed nothing for ${manifest.name} (${dir})`);
      return {
        dir,
        manifest,
        tarball: join(destination, entry.filename),
        files: entry.files.map((f) => f.path),
      };
    }),
  );
}
