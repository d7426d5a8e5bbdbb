/** The "MCP call overhead" section of `docs/PERFORMANCE.md` (issue 19). */
import type { McpOverhead } from "../../measurements/mcpOverhead.js";
import type { Summary } from "../../sampling/stats.js";
import type { Measured } from "../results.js";
import { num, table } from "./markdown.js";
import { NOT_MEASURED } from "./sessionsSection.js";

function row(name: string, s: Summary, direct: Summary): string[] {
  return [
    name,
    String(s.count),
    num(s.p50, 3),
    num(s.p90, 3),
    num(s.p99, 3),
    `${num(s.p50 / direct.p50)}×`,
    `${num(s.p99 / direct.p99)}×`,
  ];
}

/** What was measured and how. */
const METHOD = `One \`echo\` call of the reference MCP server
(\`@modelcontextprotocol/server-everything\`, over stdio, each path with a server process of its
own) in alternating blocks in the same run (\`bench/measurements/mcpOverhead.ts\`): (a) through
the MCP SDK's \`Client.callTool\` directly; (b) as a Yiem tool (\`everything__echo\`, from
\`startMcpToolSource\`) through the in-process lifecycle (\`executeToolCalls\`, no events,
nothing persisted); (c) as a remote call to a Yiem tool worker process started with
\`YIEM_MCP_CONFIG\`, on a private Redis, as the coordinator sends it (\`createRemoteExecutor\`,
events published, results appended, as the [single remote call](#distributions-ms)).`;

/** The table and the words, for a run that measured it. */
function measuredWords(mcp: McpOverhead, m: Measured): string {
  const header = ["path (ms)", "n", "p50", "p90", "p99", "p50 ÷ direct", "p99 ÷ direct"];
  const rows = [
    row("MCP SDK client, directly", mcp.direct, mcp.direct),
    row("Yiem tool, in-process lifecycle", mcp.lifecycle, mcp.direct),
    row("Yiem tool, remote call to a worker", mcp.remote, mcp.direct),
  ];
  const noopRemote = m.calls.remote.p50;
  const mcpPart = mcp.remote.p50 - noopRemote;
  const partWords =
    mcpPart > 0
      ? `so the worker's MCP client and the server take about ${num(mcpPart, 3)} ms of it`
      : "so the MCP part is within the noise of the two measurements";
  return `${table(header, rows)}

In process, Yiem's lifecycle (preparation, argument validation, the result mapped to content
and \`details\`) adds ${num(mcp.lifecycle.p50 - mcp.direct.p50, 3)} ms at p50 to the SDK's call. A remote call
adds what any remote call adds: the tool job there and back, events and the transcript: a
no-op remote call took ${num(noopRemote, 3)} ms at p50 in this run's [call latency](#distributions-ms),
and the remote MCP call ${num(mcp.remote.p50, 3)} ms, ${partWords} (the direct call:
${num(mcp.direct.p50, 3)} ms; the two remote figures were taken at different times of the run, so
their difference is only indicative). The scenario took
${mcp.durationS === undefined ? "n/a" : num(mcp.durationS, 1)} s of the full run (\`--only mcp\` runs it alone).`;
}

/** The section: the figures of the full run, or that they are not measured yet. */
export function mcpSection(m: Measured): string {
  const body = m.mcp
    ? measuredWords(m.mcp, m)
    : `Figures: ${NOT_MEASURED} in a full run (the scenario joined the full run after the last one;
\`npm run bench -- --only mcp\` prints them alone).`;
  return `## MCP call overhead

${METHOD}

${body}`;
}
