/**
 * `npm run pack`: builds, then packs every shipped workspace package (test/deploy/
 * workspacePackages.ts) into `tarballs/` at the repository root, and prints the one command
 * that installs them all into a project of your own, until they are on the npm registry:
 *
 *   npm i /path/to/yiem/tarballs/yiem-core-0.1.0.tgz /path/to/yiem/tarballs/yiem-tools-0.1.0.tgz …
 *
 * Their third-party dependencies come from the registry as usual.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { packPackages, SHIPPED_PACKAGE_DIRS } from "../test/deploy/workspacePackages.js";
import { repoRoot } from "../test/support/processes.js";

const destination = join(repoRoot, "tarballs");
await rm(destination, { recursive: true, force: true });
const packed = await packPackages(SHIPPED_PACKAGE_DIRS, destination);
for (const pkg of packed) console.log(`packed ${pkg.manifest.name} ${pkg.manifest.version}`);
console.log(
  `\nInstall them in your project with:\n\nnpm i ${packed.map((p) => p.tarball).join(" ")}`,
);
