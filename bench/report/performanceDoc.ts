import {
  breakdownSection,
  distributionsSection,
  fanoutSection,
  pipelinedAppendSection,
  throughputSection,
} from "./doc/callSections.js";
import { childRunsSection } from "./doc/childRunsSection.js";
import { clusterSection } from "./doc/clusterSection.js";
import { flowSection } from "./doc/flowSection.js";
import { followUpBurstSection } from "./doc/followUpBurstSection.js";
import { gatewayReadersSection } from "./doc/gatewayReadersSection.js";
import { gatewaySection } from "./doc/gatewaySection.js";
import { historySection } from "./doc/historySection.js";
import { mcpSection } from "./doc/mcpSection.js";
import { methodSection } from "./doc/methodSection.js";
import { newSessionSection } from "./doc/newSessionSection.js";
import { peersSection } from "./doc/peersSection.js";
import { proposalsSection } from "./doc/proposalsSection.js";
import { sessionsSection } from "./doc/sessionsSection.js";
import { sizingSection } from "./doc/sizingSection.js";
import { figuresSection, headerSection, targetsSection } from "./doc/summarySections.js";
import type { PeersRecord } from "./peersRecord.js";
import type { BenchResults } from "./results.js";
import type { HistoryEntry } from "./runHistory.js";
import type { Sessions10kRecord } from "./sessions10kRecord.js";

/**
 * The text of `docs/PERFORMANCE.md` for one run; `meanings` explains each headline figure;
 * `sessions10k` holds the opt-in scenario's own runs, oldest first (none before one ran);
 * `peers` the last `npm run bench -- --peers` (its own command), if any.
 */
export function performanceMarkdown(
  results: BenchResults,
  meanings: Map<string, string>,
  history: HistoryEntry[],
  sessions10k: Sessions10kRecord[] = [],
  peers?: PeersRecord,
): string {
  const m = results.details;
  return `${[
    headerSection(results),
    figuresSection(results, meanings),
    targetsSection(results),
    historySection(history),
    methodSection(m),
    distributionsSection(m),
    "## Where the time goes",
    breakdownSection(m),
    pipelinedAppendSection(),
    fanoutSection(m),
    throughputSection(m, results.cores),
    followUpBurstSection(m),
    mcpSection(m),
    childRunsSection(m),
    sessionsSection(m),
    sizingSection(m, sessions10k),
    clusterSection(m),
    ...(results.gateway ? [gatewaySection(results.gateway)] : []),
    ...(results.gatewayReaders ? [gatewayReadersSection(results.gatewayReaders)] : []),
    ...(results.newSession ? [newSessionSection(results.newSession)] : []),
    ...(results.flow ? [flowSection(results.flow)] : []),
    peersSection(peers),
    proposalsSection(m, results),
  ].join("\n\n")}\n`;
}
