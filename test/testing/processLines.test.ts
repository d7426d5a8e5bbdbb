/**
 * `spawnCommand` of `@yiem/testing` reads a process's output as whole lines, however the pipe
 * cuts them: a log line split between two writes is one line, not two broken halves that no
 * `waitForLine` matches (a flaky wait on a loaded machine).
 */
import { spawnCommand } from "@yiem/testing";
import { describe, expect, it, vi } from "vitest";

/** Writes a JSON log line in three pieces, 50 ms apart, then a line without a newline. */
const WRITER = `
const line = JSON.stringify({ level: 30, msg: "listing over its bounds", pad: "x".repeat(5000) });
const pieces = [line.slice(0, 10), line.slice(10, 3000), line.slice(3000) + "\\nnext line\\n"];
let i = 0;
const write = () => {
  process.stdout.write(pieces[i++]);
  if (i < pieces.length) setTimeout(write, 50);
  else process.stderr.write("last words without a newline");
};
write();
`;

describe("a test process's output lines", () => {
  it("joins a line written in pieces, and keeps an unfinished last line", async () => {
    const child = spawnCommand(["node", "-e", WRITER], {});
    const line = await child.waitForLine((l) => l.startsWith("{") && l.endsWith("}"), 10_000);
    expect(JSON.parse(line)).toMatchObject({ msg: "listing over its bounds" });
    expect(await child.exited).toBe(0);
    // stdout and stderr are two pipes: their lines may come in either order.
    await vi.waitFor(() => expect(child.lines).toHaveLength(3));
    const expected = [line, "next line", "last words without a newline"];
    expect([...child.lines].sort()).toEqual(expected.sort());
  });
});
