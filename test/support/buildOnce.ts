import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./processes.js";

/**
 * Vitest's global setup: builds the packages and apps (`tsc -b`, incremental, then the apps'
 * bundles where a compiled file is newer than one) before any test file runs, since test
 * clusters start the bundled apps as deployed (`testLaunch`). `npm test` builds in its
 * `pretest` already, so it is skipped there; `npx vitest run <file>` builds here, and a test
 * never runs against a stale `dist` or bundle. With `YIEM_TEST_LAUNCH=source` nothing is built.
 */
export default function buildOnce(): void {
  if (process.env.npm_lifecycle_event === "test") return;
  if (process.env.YIEM_TEST_LAUNCH === "source") return;
  execFileSync(join(repoRoot, "node_modules", ".bin", "tsc"), ["-b"], {
    cwd: repoRoot,
    stdio: "inherit",
  });
  execFileSync(
    join(repoRoot, "node_modules", ".bin", "tsx"),
    ["scripts/bundleApps.ts", "--check-fresh"],
    { cwd: repoRoot, stdio: "inherit" },
  );
}
