import { describe, expect, it } from "vitest";
import { faultModel } from "../faults/scriptedFaultModel.js";
import { type CliRun, startCli } from "../support/cliProcess.js";
import { useLedgerCluster } from "../support/faults.js";

// A 20 s job lock: the call of a SIGKILLed worker goes to another worker 10–22 s after the
// kill, while the worker registry forgets the dead worker within 6 s. So the CLI has its
// say about the dead worker well before the retry, as it would with the default 30 s lock.
const { cluster } = useLedgerCluster({
  workers: 2,
  model: { respond: faultModel },
  env: { YIEM_LOCK_MS: "20000" },
});

/**
 * Sends `message` (a ledger tool call that reports its pid first), SIGKILLs the worker the
 * CLI shows running it, and resolves with the CLI's run and the dead worker's id.
 */
async function sendAndKillItsWorker(message: string): Promise<{ run: CliRun; dead: string }> {
  const send = startCli(["send", message], cluster.env);
  const [, dead = "", pid = ""] = await send.waitFor(/… ledger\w+ on (worker-\d+) \{"pid":(\d+)\}/);
  const worker = cluster.workers.find((w) => w.pid === Number(pid));
  if (!worker) throw new Error(`no worker process with pid ${pid}`);
  worker.signal("SIGKILL");
  const run = await send.done;
  await cluster.addWorker(); // two live workers for the next test
  return { run, dead };
}

/** Where `pattern` first matches in `text` (-1 when it does not). */
function positionOf(text: string, pattern: RegExp | string): number {
  return typeof pattern === "string" ? text.indexOf(pattern) : text.search(pattern);
}

describe("yiem send when the worker running a call dies", () => {
  it("names the dead worker at once, then the worker the call was retried on", async () => {
    const { run, dead } = await sendAndKillItsWorker("ledgerRemote k1 2500");
    expect(run.code).toBe(0);
    const waiting = positionOf(
      run.stdout,
      `… waiting for ${dead}: it stopped while running ledgerRemote(`,
    );
    const retried = run.stdout.match(
      /^↻ ledgerRemote\(.*\) retried on (worker-\d+) after (worker-\d+) stopped$/m,
    );
    expect(waiting).toBeGreaterThan(-1);
    expect(retried?.[2]).toBe(dead);
    expect(retried?.[1]).not.toBe(dead);
    expect(positionOf(run.stdout, retried?.[0] ?? "")).toBeGreaterThan(waiting);
    const ended = new RegExp(
      `^✔ ledgerRemote\\(.*\\) on ${retried?.[1]} after ${dead} stopped \\d+ ms — k1-1 recorded$`,
      "m",
    );
    expect(run.stdout).toMatch(ended);
    expect(run.stdout).toContain("final k1: k1-1 recorded");
  }, 60_000);

  it("with no retry left, names the dead worker on the failed call's line too", async () => {
    const { run, dead } = await sendAndKillItsWorker("ledgerNoRetry k2 2500");
    expect(run.stdout).toContain(`… waiting for ${dead}: it stopped while running ledgerNoRetry(`);
    expect(run.stdout).toMatch(
      new RegExp(`^✖ ledgerNoRetry\\(.*\\) on worker-\\d+ after ${dead} stopped \\d+ ms — `, "m"),
    );
    expect(run.stdout).not.toMatch(new RegExp(`^✖ ledgerNoRetry\\(.*\\) on ${dead} `, "m"));
    expect(run.code).toBe(0); // the model answered, having read the failed call's result
  }, 60_000);
});
