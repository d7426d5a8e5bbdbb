/** The checks the checker runs, as the report names them. */
export type CheckName = "requests" | "side effects" | "transcripts" | "tree" | "leases" | "keys";

/**
 * One thing a check found: a `violation` breaks a documented guarantee (the soak fails); a
 * `note` is what the docs allow but the report counts (a rerun of an idempotent call, a
 * retried remote call).
 */
export interface Finding {
  check: CheckName;
  severity: "violation" | "note";
  /** What it is about: a job id, a session, a call label, a key. */
  subject: string;
  detail: string;
}

/** A violation of `check` about `subject`. */
export function violation(check: CheckName, subject: string, detail: string): Finding {
  return { check, severity: "violation", subject, detail };
}

/** A note of `check` about `subject`. */
export function note(check: CheckName, subject: string, detail: string): Finding {
  return { check, severity: "note", subject, detail };
}
