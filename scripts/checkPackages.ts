/**
 * `npm run check:packages`: packs every shipped workspace package (test/deploy/
 * workspacePackages.ts) and checks each tarball with publint (package.json against the
 * files it ships; warnings count as errors) and, for the packages that export modules,
 * with @arethetypeswrong/cli under its `esm-only` profile (the packages are ESM only, so
 * `require` and node10 resolution are not checked), and checks that each is publishable (not
 * `private`) and depends on the other Yiem packages by their exact current versions. Needs the
 * built `dist` (`npm run build`).
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

/**
 * What keeps the packed packages from being published and installed together: a `private`
 * manifest, or a `@yiem/*` dependency that is not shipped or not at its current version.
 */
function publishProblems(packed: PackedPackage[]): string[] {
  const versions = new Map(packed.map((p) => [p.manifest.name, p.manifest.version]));
  const problems: string[] = [];
  for (const { manifest } of packed) {
    if ((manifest as { private?: boolean }).private) problems.push(`${manifest.name} is private`);
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (!name.startsWith("@yiem/")) continue;
      const version = versions.get(name);
      if (version === undefined)
        problems.push(`${manifest.name} depends on ${name}, which does not ship`);
      else if (range !== version)
        problems.push(`${manifest.name} depends on ${name}@${range}, not its version ${version}`);
    }
  }
  return problems;
}

async function main(): Promise<void> {
  const destination = await mkdtemp(join(tmpdir(), "yiem-check-packages-"));
  try {
    const packed = await packPackages(SHIPPED_PACKAGE_DIRS, destination);
    const results = await Promise.all(
      packed.flatMap((pkg) => checksFor(pkg).map((check) => runCheck(pkg, check))),
    );
    const problems = publishProblems(packed);
    for (const problem of problems) console.log(`FAIL  publishable: ${problem}`);
    if (problems.length === 0)
      console.log("ok    publishable: none private, @yiem/* at their versions");
    if (results.includes(false) || problems.length > 0) process.exitCode = 1;
  } finally {
    await rm(destination, { recursive: true, force: true });
  }
}

await main();
