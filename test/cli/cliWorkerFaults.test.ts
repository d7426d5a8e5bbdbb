import { describe, expect, it } from "vitest";
import { faultModel } from "../faults/scriptedFaultModel.js";
import { type CliRun, startCli } from "../support/cliProcess.js";
import { useLedgerCluster } from "../support/faults.js";

// The failure detector hands a SIGKILLed worker's call to another worker about 1.5 s after
// the kill (YIEM_ALIVE_TTL_MS), before the worker registry forgets the dead worker (6 s); the
// 10 s job lock is what a call would wait without the detector. A call with no retry left
// waits one lock for the dead worker's result (so it ends well after the registry forgot that
// worker), then the coordinator's grace (1 s here: a SIGKILLed worker never reports).
const { cluster } = useLedgerCluster({
  workers: 2,
  model: { respond: faultModel },
  env: { YIEM_LOCK_MS: "10000", YIEM_STOPPED_WORKER_GRACE_MS: "1000" },
});

/**
 * Sends `message` (a ledger tool call that reports its pid first), SIGKILLs the worker the
 * CLI shows running it, starts a worker in its place (two live workers for the next test)
 * and resolves with the CLI's run and the dead worker's id.
 */
async function sendAndKillItsWorker(message: string): Promise<{ run: CliRun; dead: string }> {
  const send = startCli(["send", message], cluster.env);
  const [, dead = "", pid = ""] = await send.waitFor(/… ledger\w+ on (worker-\d+) \{"pid":(\d+)\}/);
  const worker = cluster.workers.find((w) => w.pid === Number(pid));
  if (!worker) throw new Error(`no worker process with pid ${pid}`);
  worker.signal("SIGKILL");
  const [run] = await Promise.all([send.done, cluster.addWorker()]);
  return { run, dead };
}

/** Where `pattern` first matches in `text` (-1 when it does not). */
function positionOf(text: string, pattern: RegExp | string): number {
  return typeof pattern === "string" ? text.indexOf(pattern) : text.search(pattern);
}

describe("yiem send when the worker running a call dies", () => {
  it("names the dead worker and the worker the call was retried on", async () => {
    const { run, dead } = await sendAndKillItsWorker("ledgerRemote k1 2500");
    expect(run.code).toBe(0);
    const waiting = positionOf(
      run.stdout,
      `… waiting for ${dead}: it stopped while running ledgerRemote(`,
    );
    const retried = run.stdout.match(
      /^↻ ledgerRemote\(.*\) retried on (worker-\d+) after (worker-\d+) stopped$/m,
    );
    expect(retried?.[2], run.stdout).toBe(dead);
    expect(retried?.[1]).not.toBe(dead);
    // A retry slower than the registry's 6 s is announced first: "waiting for <dead worker>".
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

  it("says a worker drained by SIGTERM is draining, not stopped, and shows the call ending on it", async () => {
    // 9 s: longer than a stopped worker's announcement lives (6 s), within the drain (30 s).
    const send = startCli(["send", "ledgerRemote k3 9000"], cluster.env);
    const [, worker = "", pid = ""] = await send.waitFor(
      /… ledgerRemote on (worker-\d+) \{"pid":(\d+)\}/,
    );
    const slot = cluster.workers.find((w) => w.pid === Number(pid));
    if (!slot) throw new Error(`no worker process with pid ${pid}`);
    slot.signal("SIGTERM");
    const [run] = await Promise.all([send.done, cluster.addWorker()]); // two live workers after it
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `… ${worker} is draining (shutting down): it finishes ledgerRemote(`,
    );
    expect(run.stdout).not.toContain("stopped while running");
    expect(run.stdout).toMatch(
      new RegExp(`^✔ ledgerRemote\\(.*\\) on ${worker} \\d+ ms — k3-1 recorded$`, "m"),
    );
    expect(run.stdout).toContain("final k3: k3-1 recorded");
  }, 60_000);
});
