import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type TestProcess } from "@yiem/testing";
import { repoRoot, spawnCommand } from "./processes.js";

/** A private npm registry (verdaccio) on loopback, for publishing and installing packages. */
export interface PrivateRegistry {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /**
   * An npm user config file that publishes to this registry (an anonymous token: the
   * registry lets anyone publish) and takes `@yiem/*` from it.
   */
  userconfig: string;
  process: TestProcess;
  stop(): Promise<void>;
}

/**
 * Starts verdaccio (the repo's devDependency) on a free loopback port with a storage folder of
 * its own in the OS temp folder, no uplinks (it serves only what is published to it) and
 * anonymous publishing; resolves once it answers `/-/ping`. `stop` ends it and removes the
 * folder.
 *
 * @example const registry = await startPrivateRegistry(); // npm publish --userconfig registry.userconfig
 */
export async function startPrivateRegistry(): Promise<PrivateRegistry> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-registry-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = [
    `storage: ${join(dir, "storage")}`,
    "auth:",
    `  htpasswd: { file: ${join(dir, "htpasswd")}, max_users: -1 }`,
    "uplinks: {}",
    "packages:",
    "  '**': { access: $all, publish: $all, unpublish: $all }",
    "log: { type: stdout, format: json, level: warn }",
  ].join("\n");
  await writeFile(join(dir, "config.yaml"), `${config}\n`);
  const userconfig = join(dir, "npmrc");
  await writeFile(userconfig, `@yiem:registry=${url}\n//127.0.0.1:${port}/:_authToken=anonymous\n`);
  const bin = join(repoRoot, "node_modules", ".bin", "verdaccio");
  const child = spawnCommand(
    [bin, "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
    {},
    dir,
  );
  const stop = async () => {
    await child.stop(3000);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForPing(url, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, userconfig, process: child, stop };
}

/** Resolves once the registry answers `/-/ping`; throws after 30 s or if it exits first. */
async function waitForPing(url: string, child: TestProcess): Promise<void> {
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(`${url}-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer at ${url}:\n${child.lines.join("\n")}`);
}
