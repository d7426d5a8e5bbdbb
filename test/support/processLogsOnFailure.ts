import type { TestProcess } from "@yiem/testing";
import { afterEach } from "vitest";

/** How many of each process's last log lines a failed test prints. */
const TAIL_LINES = 25;

/**
 * Prints the last log lines of every process `processes()` returns (by role), to stderr, after each test
 * of the calling file that failed: a test that timed out on CI then says what the coordinator
 * and the workers were doing. Passing tests print nothing.
 *
 * @example printProcessLogsOnFailure(() => ({ coordinator: cluster.coordinators, worker: cluster.workers }));
 */
export function printProcessLogsOnFailure(processes: () => Record<string, TestProcess[]>): void {
  afterEach((context) => {
    if (context.task.result?.state !== "fail") return;
    let byRole: Record<string, TestProcess[]>;
    try {
      byRole = processes();
    } catch {
      return; // the fixture never started: its own error says why
    }
    const tails = Object.entries(byRole).flatMap(([role, list]) =>
      list.map(
        (p, i) =>
          `--- ${role} ${i + 1} (pid ${p.pid}), last ${TAIL_LINES} lines:\n${p.lines.slice(-TAIL_LINES).join("\n")}`,
      ),
    );
    process.stderr.write(`\n[${context.task.name}] failed; process logs:\n${tails.join("\n")}\n`);
  });
}
