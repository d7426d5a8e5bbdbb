/**
 * The layout of a session's replay stream entry, as the publishing scripts write it
 * (`appendEvent.lib.lua`): field `e` holds the JSON texts of one or more events, one a line
 * (a batch's events share one entry), field `b` the stream's running byte total after its last
 * event, and its id is the number of its last event (`<seq>-1`). Readers of "every event after
 * N" read the entries after `N-1` and skip the events up to N the first of them may begin with.
 */

/** The JSON texts of the events one replay stream entry holds, in order (none for a foreign entry). */
export function eventTextsOf(fields: readonly string[]): string[] {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === "e") return (fields[i + 1] ?? "").split("\n");
  }
  return [];
}

/** The XRANGE start of the entries that may hold events numbered above `afterSeq`. */
export function entriesAfter(afterSeq: number): string {
  return `(${afterSeq}-1`;
}
