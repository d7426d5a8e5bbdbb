/**
 * Provider limits seen (issue 33, item 4): two coordinator processes calling a scripted model
 * through a shared limit count what happens on their /metrics (429s received, tokens
 * admitted, waits), and `yiem limits` shows from Redis who waits for what while calls wait for
 * their turn. Real processes, a private Redis, the compiled CLI.
 */
import { type ScriptedReply, type ScriptedRequest, sampleOf, scrape } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** One request every 2 s across both coordinators: a few runs at once must wait. */
const LIMITS = { "scripted-model": { requests: 1, windowMs: 2000, outputTokens: 20 } };

let refusedOnce = false;

/** Echoes the input; `refuse` is answered 429 once, asking for a second's wait. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  if (input === "refuse" && !refusedOnce) {
    refusedOnce = true;
    return { kind: "httpError", status: 429, message: "rate limit", retryAfterSeconds: 1 };
  }
  return { kind: "text", text: `echo ${input}` };
}

const cluster = useTestCluster({
  coordinators: 2,
  workers: 0,
  model: { respond },
  coordinatorEnv: { YIEM_MODEL_LIMITS: JSON.stringify(LIMITS), YIEM_COORDINATOR_CONCURRENCY: "4" },
});

/** The series of calls of no tenant under the limit. */
const LIMIT = 'limit="scripted-model",tenant=""';

/** The sum over both coordinators of one series of their /metrics. */
async function clusterSum(series: string): Promise<number> {
  const scrapes = await Promise.all(cluster.coordinatorUrls.map((url) => scrape(`${url}/metrics`)));
  return scrapes.reduce((sum, text) => sum + (sampleOf(text, series) ?? 0), 0);
}

/** Sends `inputs` as runs of their own sessions and waits for each answer's text. */
async function answersTo(runs: Promise<{ runId: string }>[]): Promise<string[]> {
  const answers = await Promise.all(
    (await Promise.all(runs)).map(({ runId }) =>
      cluster.client.waitForAnswer(runId, { timeoutMs: 60_000 }),
    ),
  );
  return answers.map(({ response }) => {
    const [part] = response.content;
    return part?.type === "text" ? part.text : `${response.stopReason} ${response.errorMessage}`;
  });
}

describe("provider limits seen on /metrics and in yiem limits", () => {
  it("counts a 429 received and the tokens admitted, by limit", async () => {
    expect(await answersTo([cluster.client.send("refuse")])).toEqual(["echo refuse"]);
    expect(await clusterSum(`yiem_model_limit_429_total{${LIMIT}}`)).toBe(1);
    expect(await clusterSum(`yiem_model_limit_tokens_admitted_total{${LIMIT}}`)).toBeGreaterThan(0);
    // Two requests waited for their turn: the refused one and its retry.
    expect(await clusterSum(`yiem_model_limit_wait_seconds_count{${LIMIT}}`)).toBe(2);
  });

  it("counts a tenant's calls in series of its own", async () => {
    const acme = 'limit="scripted-model",tenant="acme"';
    const run = cluster.client.send("for acme", { tenant: "acme" });
    expect(await answersTo([run])).toEqual(["echo for acme"]);
    expect(await clusterSum(`yiem_model_limit_tokens_admitted_total{${acme}}`)).toBeGreaterThan(0);
    expect(await clusterSum(`yiem_model_limit_wait_seconds_count{${acme}}`)).toBe(1);
    expect(await clusterSum(`yiem_model_limit_429_total{${acme}}`)).toBe(0);
  });

  it("shows the calls waiting for their turn: the gauge, and who waits in yiem limits", async () => {
    const runs = ["a", "b", "c", "d"].map((input) => cluster.client.send(`wait ${input}`));
    await expect
      .poll(() => clusterSum(`yiem_model_limit_calls_waiting{${LIMIT}}`), { timeout: 10_000 })
      .toBeGreaterThan(0);
    const cli = await runCli(["limits"], cluster.env);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^LIMIT\s+REQUESTS\s+TOKENS\s+WINDOW\s+PAUSED\s+WAITING$/m);
    expect(cli.stdout).toMatch(
      /^scripted-model\s+[01]\/1\s+\d+\s+2\.0 s\s+(no|for \S+ s)\s+[1-4]$/m,
    );
    const ids = await Promise.all(
      cluster.coordinatorUrls.map(async (url) => {
        const health = (await (await fetch(`${url}/healthz`)).json()) as { coordinatorId: string };
        return health.coordinatorId;
      }),
    );
    const waiting = cli.stdout
      .split("\n")
      .filter((line) => /\sscripted-model\s+default\s/.test(line));
    expect(waiting.length).toBeGreaterThan(0);
    for (const line of waiting) expect(ids).toContain(line.split(/\s+/)[0]);
    const json = await runCli(["limits", "--json"], cluster.env);
    const [state] = JSON.parse(json.stdout) as [{ limit: { name: string; requests: number } }];
    expect(state.limit).toMatchObject({ name: "scripted-model", requests: 1 });
    expect(await answersTo(runs)).toEqual(["a", "b", "c", "d"].map((i) => `echo wait ${i}`));
    expect(await clusterSum(`yiem_model_limit_calls_waiting{${LIMIT}}`)).toBe(0);
  });
});
