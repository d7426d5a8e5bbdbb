import type { SentInput } from "../workload.js";
import type { Finding } from "./findings.js";
import { checkKeys } from "./keys.js";
import { checkLeases } from "./leases.js";
import type { LedgerEntry } from "./ledger.js";
import { checkRequests, type RequestCounts } from "./requests.js";
import { checkSideEffects, type SideEffectCounts } from "./sideEffects.js";
import type { SoakSnapshot } from "./snapshot.js";
import { checkTranscript } from "./transcripts.js";
import { checkTrees, type TreeCounts } from "./tree.js";

/** Everything the checker found, and what it counted. */
export interface CheckResult {
  findings: Finding[];
  violations: Finding[];
  requests: RequestCounts;
  sideEffects: SideEffectCounts;
  trees: TreeCounts;
  /** Keys at the end, by kind. */
  keyKinds: Map<string, number>;
}

/**
 * Runs every check on what Redis held at the end (`snapshot`) and what the tools recorded
 * outside it (`ledger`): requests answered exactly once, side effects within their
 * documented bounds, transcripts well formed, each child run answering its parent's call
 * once (`tree.ts`), no lease of a dead holder, every key of a
 * known kind within its retention. Pure: the checker's own tests feed it made-up inputs.
 */
export function checkSoak(options: {
  snapshot: SoakSnapshot;
  ledger: LedgerEntry[];
  sent: SentInput[];
  seed: number;
  cluster: boolean;
  liveCoordinatorPids: number[];
}): CheckResult {
  const { snapshot } = options;
  const requests = checkRequests({ ...snapshot, sent: options.sent });
  const sideEffects = checkSideEffects({
    transcripts: snapshot.transcripts,
    ledger: options.ledger,
    seed: options.seed,
    cluster: options.cluster,
  });
  const trees = checkTrees(snapshot);
  const keys = checkKeys(snapshot.keys, snapshot.prefix);
  const findings = [
    ...requests.findings,
    ...sideEffects.findings,
    ...trees.findings,
    ...[...snapshot.transcripts].flatMap(([sessionId, messages]) =>
      checkTranscript(sessionId, messages),
    ),
    ...checkLeases({ leases: snapshot.leases, liveCoordinatorPids: options.liveCoordinatorPids }),
    ...keys.findings,
  ];
  return {
    findings,
    violations: findings.filter((f) => f.severity === "violation"),
    requests: requests.counts,
    sideEffects: sideEffects.counts,
    trees: trees.counts,
    keyKinds: keys.kinds,
  };
}
