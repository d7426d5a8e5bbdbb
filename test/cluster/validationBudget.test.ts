/**
 * Schema validation runs on the coordinator's event loop: whatever the arguments, it must
 * stay bounded, so the coordinator keeps answering while a hostile run is validated. The
 * probe's bound is a liveness bound, not a speed target: ajv's pairwise uniqueItems held the
 * loop for seconds per argument, while a loaded CI machine can delay a healthy answer by a
 * few hundred milliseconds.
 */

import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/** ~190 KB of distinct objects: ajv's own uniqueItems compares them pairwise. */
const records = Array.from({ length: 4000 }, (_, i) => ({ id: i, note: "x".repeat(30) }));

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  const calls = Array.from({ length: 4 }, (_, i) => ({
    id: `u${i}`,
    name: "uniqueList",
    arguments: { records: i === 3 ? [...records, records[0]] : records },
  }));
  return { kind: "toolCalls", calls };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

describe("schema validation under hostile arguments", () => {
  it("validates four 190 KB uniqueItems arguments while /healthz keeps answering within 2.5 s", async () => {
    const { runId } = await cluster.client.send("count these");
    let done = false;
    const answer = cluster.client.waitForResponse(runId, { timeoutMs: 60_000 }).finally(() => {
      done = true;
    });
    const slowProbes: string[] = [];
    let probes = 0;
    while (!done) {
      probes++;
      await fetch(`${cluster.coordinatorUrls[0]}/healthz`, { signal: AbortSignal.timeout(2500) })
        .then((res) => res.arrayBuffer())
        .catch((err: Error) => slowProbes.push(err.name));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const response = await answer;
    const text = response.content.map((b) => ("text" in b ? b.text : "")).join("");
    expect(text.split(" | ").slice(0, 3)).toEqual(["4000 records", "4000 records", "4000 records"]);
    expect(text).toContain("must NOT have duplicate items (items ## 0 and 4000 are identical)");
    expect(probes).toBeGreaterThan(0);
    expect(slowProbes).toEqual([]);
  });
});
