import { type Finding, violation } from "./findings.js";

/** The pid in a lease token (`<host>-<pid>:<uuid>`), if it has one. */
export function holderPidOf(token: string): number | undefined {
  const match = /-(\d+):[^:]+$/.exec(token);
  return match ? Number(match[1]) : undefined;
}

/**
 * Checks the leases still set once every run ended and a lease duration passed: a session
 * may be leased only by a coordinator that is alive (a dead holder's lease must have expired
 * by then), and no lease may be without an expiry.
 */
export function checkLeases(options: {
  leases: Array<{ sessionId: string; token: string; ttlMs: number }>;
  liveCoordinatorPids: number[];
}): Finding[] {
  const findings: Finding[] = [];
  for (const lease of options.leases) {
    const pid = holderPidOf(lease.token);
    if (lease.ttlMs < 0)
      findings.push(violation("leases", lease.sessionId, `lease ${lease.token} has no expiry`));
    if (pid === undefined || !options.liveCoordinatorPids.includes(pid))
      findings.push(
        violation(
          "leases",
          lease.sessionId,
          `still leased by ${lease.token}, whose holder is dead, past its lease`,
        ),
      );
  }
  return findings;
}
