import type { NewSession } from "../../measurements/newSession.js";
import { count, num, table } from "./markdown.js";

/** The cost of naming a new session against the coordinator queue's backlog. */
export function newSessionSection(n: NewSession): string {
  const rows = n.at.map((at) => [
    count(at.backlog),
    num(at.hasSessionCommands, 1),
    num(at.commandsPerRequest, 1),
  ]);
  const costs = new Set(n.at.map((at) => num(at.commandsPerRequest, 1)));
  const verdict = costs.size === 1 ? "**met**: the same at every backlog" : "**missed**";
  return `### Naming a new session

Measured alone (\`npm run bench -- --only newSession\`, ${n.date.slice(0, 10)}): a private Redis
with no coordinator, so requests of other sessions wait in the coordinator queue; at each
backlog, ${n.samples} new session ids are asked about (\`YiemClient.hasSession\`, what the gateway
asks before it claims a session a request names) and sent to (\`send\`), counted with
\`INFO commandstats\` (a script's own commands included). Target (issue 34): creating a run in a
new session costs a constant number of Redis commands whatever the backlog: ${verdict}.
Before, \`hasSession\` paged through the queue's unanswered jobs: 2,076 commands per request with
2,000 waiting; it is one \`EXISTS\` of the session's keys now (its \`known\` mark is written by
\`send\` and by every input a coordinator records).

${table(["requests waiting", "`hasSession` (commands)", "`hasSession` + `send` (commands)"], rows)}

The gateway's other lists cost what they return too (\`test/gateway/requestCosts.test.ts\` counts
their commands): \`GET /v1/sessions\` reads each listed session's usage summary (stored by
\`finishRun\` as each run closes), never a transcript (it read every listed transcript whole:
8 MB for a 2 KB answer); \`GET /v1/approvals\` of a key reads its sessions' tree indexes of
calls awaiting approval (\`treeApprovals\`, on each tree's root), never every call of the
cluster with its arguments (1.09 MB for an empty list).`;
}
