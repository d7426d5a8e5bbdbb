/**
 * `npm run check:packages`: packs every shipped workspace package (test/deploy/
 * workspacePackages.ts) and checks each tarball with publint (package.json against the
 * files it ships; warnings count as errors) and, for the packages that export modules,
 * with @arethetypeswrong/cli under its `esm-only` profile (the packages are ESM only, so
 * `require` and node10 resolution are not checked). Needs the built `dist` (`npm run build`).
 * Exits 1 when a check fails, after running them all.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type PackedPackage,
  packPackages,
  SHIPPED_PACKAGE_DIRS,
} from "../test/deploy/workspacePackages.js";
import { repoRoot } from "../test/support/processes.js";

const run = promisify(execFile);

/** One check of one tarball: its name and the command line (a bin of node_modules/.bin). */
interface Check {
  label: string;
  bin: string;
  args: string[];
}

/** The checks a packed package gets: publint always, attw when it exports modules. */
function checksFor(pkg: PackedPackage): Check[] {
  const checks: Check[] = [
    { label: "publint", bin: "publint", args: ["run", "--strict", pkg.tarball] },
  ];
  if (pkg.manifest.exports !== undefined) {
    checks.push({
      label: "attw",
      bin: "attw",
      args: ["--profile", "esm-only", "--no-color", "--no-emoji", pkg.tarball],
    });
  }
  return checks;
}

/** Runs one check; resolves with whether it passed, having printed its output. */
async function runCheck(pkg: PackedPackage, check: Check): Promise<boolean> {
  const bin = join(repoRoot, "node_modules", ".bin", check.bin);
  const title = `${check.label} ${pkg.manifest.name}`;
  try {
    const { stdout } = await run(bin, check.args, { cwd: repoRoot });
    console.log(`ok    ${title}`);
    if (process.env.CHECK_PACKAGES_VERBOSE) console.log(stdout);
    return true;
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    console.log(`FAIL  ${title}\n${stdout}${stderr}`);
    return false;
  }
}

async function main(): Promise<void> {
  const destination = await mkdtemp(join(tmpdir(), "yiem-check-packages-"));
  try {
    const packed = await packPackages(SHIPPED_PACKAGE_DIRS, destination);
    const results = await Promise.all(
      packed.flatMap((pkg) => checksFor(pkg).map((check) => runCheck(pkg, check))),
    );
    if (results.includes(false)) process.exitCode = 1;
  } finally {
    await rm(destination, { recursive: true, force: true });
  }
}

await main();
