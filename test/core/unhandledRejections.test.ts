/**
 * The last-resort handler every cluster process installs (issue 34): a promise rejection that
 * nothing handled is logged with its context, and the process goes on serving. A real Node
 * process, as the apps run it; without the handler Node ends it with exit code 1.
 */
import { logEntries } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { spawnCommand } from "../support/processes.js";

const probe = `
import { createLogger, keepServingOnUnhandledRejection } from "@yiem/core";
keepServingOnUnhandledRejection(createLogger("probe"), "probe", { maxLoggedPerMinute: 2 });
for (let i = 0; i < 5; i++) Promise.reject(new RangeError("Maximum call stack size exceeded"));
setTimeout(() => { console.log("still serving"); process.exit(0); }, 300);
`;

describe("keepServingOnUnhandledRejection", () => {
  it("logs an unhandled rejection with its context and keeps the process serving", async () => {
    const child = spawnCommand(["node", "--input-type=module", "-e", probe], {});
    expect(await child.exited).toBe(0);
    expect(child.lines).toContain("still serving");
    const logged = logEntries(child, "unhandled promise rejection; the process keeps serving");
    expect(logged).toHaveLength(2); // the rest of the minute's flood is counted, not logged
    expect(logged[0]).toMatchObject({
      level: 50,
      process: "probe",
      kind: "RangeError",
      err: "Maximum call stack size exceeded",
    });
    expect(String(logged[0]?.stack)).toContain("RangeError");
  });
});
