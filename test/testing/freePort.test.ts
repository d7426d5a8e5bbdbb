/**
 * `freePort` of `@yiem/testing` as test processes running side by side use it: two processes
 * picking ports at once never get the same one (a second server on the same port fails to
 * start, or a test talks to another test's `redis-server`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnCommand } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

/** Picks 250 ports one after another and prints them as one JSON line. */
const PICKER = `
import { freePort } from "@yiem/testing";
const ports = [];
for (let i = 0; i < 250; i++) ports.push(await freePort());
console.log(JSON.stringify(ports));
`;

/** The ports one picker process printed. */
async function pickInProcess(env: Record<string, string>): Promise<number[]> {
  const picker = spawnCommand(["node", "--input-type=module", "-e", PICKER], env, {
    cwd: repoRoot,
  });
  const line = await picker.waitForLine((l) => l.startsWith("["), 60_000);
  return JSON.parse(line) as number[];
}

describe("free ports for test servers", () => {
  it("never gives two processes picking at once the same port", async () => {
    // A private reservations folder: the picks here hold no port of the other test files.
    const folder = await mkdtemp(join(tmpdir(), "yiem-free-port-"));
    try {
      const env = { TMPDIR: folder };
      const [first, second] = await Promise.all([pickInProcess(env), pickInProcess(env)]);
      expect(new Set(first).size).toBe(250);
      expect(new Set(second).size).toBe(250);
      // 500 random picks from ~12,800 ports would share about five without reservations.
      expect(first.filter((port) => second.includes(port))).toEqual([]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
