/**
 * The HTTP gateway against a real cluster (Redis, a coordinator, a worker), through real HTTP:
 * keys with scopes and owners, every REST endpoint, the OpenAPI document, rate limits,
 * idempotency, body limits, CORS and logs; server-sent events replayed, followed live and
 * resumed with no gap after a dropped connection or a gateway SIGKILLed mid-stream. Two
 * gateways share the cluster: one from its sources, one compiled as deployed
 * (`node apps/gateway/dist/main.bundle.js`); one file, so the cluster starts once. Every process
 * runs as its Redis ACL user of `docs/SECURITY.md`, the gateways as the `gateway` role.
 */
import { mkdtemp, rename, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterKeys } from "@yiem/core";
import { logMessage, type ScriptedReply, type ScriptedRequest } from "@yiem/testing";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { documentedAclLine, urlAs } from "../support/aclRoles.js";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { spawnCommand } from "../support/processes.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openEventStream,
  type SseEvent,
  type SseStream,
  startGatewayProcess,
  type TestKey,
  type Wire,
  writeKeysFile,
} from "./support.js";

/**
 * The model: `hello <x>` answers `hi <x>`; `approve <label>` calls `ledgerApproval` (which
 * waits for a decision); `sleep <ms>` calls `sleepFor`; after tool results it answers
 * `done: <results>` (streamed in 6 deltas); `steps <n>` calls `sleepFor` reporting `n` steps
 * 150 ms apart.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const text = String(lastUser?.content ?? "");
  const [verb = "", arg = "x"] = text.split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: `done: ${results.join(" | ")}`, textChunks: 6, chunkDelayMs: 60 };
  }
  if (verb === "steps") {
    const steps = Number(arg);
    return {
      kind: "toolCalls",
      calls: [
        { id: "walk", name: "sleepFor", arguments: { ms: steps * 150, steps, label: "walk" } },
      ],
    };
  }
  if (verb === "approve") {
    return {
      kind: "toolCalls",
      calls: [{ id: `call-${arg}`, name: "ledgerApproval", arguments: { label: arg } }],
    };
  }
  if (verb === "sleep") {
    return {
      kind: "toolCalls",
      calls: [{ id: "nap", name: "sleepFor", arguments: { ms: Number(arg), label: "nap" } }],
    };
  }
  return { kind: "text", text: `hi ${arg}` };
}

/** Every process runs as its documented Redis ACL user (`docs/SECURITY.md`): the gateways as `gateway`. */
const PASSWORDS = {
  coordinator: "coord-pw-1",
  worker: "worker-pw-2",
  gateway: "gateway-pw-3",
} as const;
let serverUrl = "";
const as = (role: keyof typeof PASSWORDS) => urlAs(serverUrl, role, PASSWORDS[role]);

const cluster = useTestCluster({
  workers: 0, // started below, as the worker user
  model: { respond },
  redis: {
    privateServer: true,
    requirePass: "admin-pw-0",
    aclLines: (["coordinator", "worker", "gateway"] as const).map((role) =>
      documentedAclLine(role, PASSWORDS[role]),
    ),
  },
  redisUrl: (redis) => {
    serverUrl = redis.url;
    return as("coordinator");
  },
});

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read", "approve"] });
const submitter = makeKey("submitter", { scopes: ["submit"] });
const auditor = makeKey("auditor", { scopes: ["read"], sessions: "all" });
const onlyOps = makeKey("only-ops", { scopes: ["submit", "read"], agents: ["ops"] });
const limited = makeKey("limited", { scopes: ["read"], requestsPerMinute: 3 });
const oneRun = makeKey("one-run", { scopes: ["submit", "read"], runsAtOnce: 1 });
const keys: TestKey[] = [alice, bob, submitter, auditor, onlyOps, limited, oneRun];

let gateway: GatewayProcess;
/** Every gateway of `beforeAll` that got ready, stopped after the file. */
const running: GatewayProcess[] = [];
let compiled: GatewayProcess;
let cliKey: { secret: string; name: string };
let env: Record<string, string>;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "yiem-gateway-"));
  const file = join(dir, "keys.jsonl");
  await writeKeysFile(file, keys, ["# test keys"]);
  const created = await runCli(
    ["keys", "create", "--name", "from-cli", "--scopes", "submit,read", "--file", file],
    {},
  );
  cliKey = { name: "from-cli", secret: /key: (\S+)/.exec(created.stdout)?.[1] ?? "" };
  await cluster.addWorkerWith({ REDIS_URL: as("worker") });
  env = {
    ...cluster.env,
    REDIS_URL: as("gateway"),
    YIEM_API_KEYS: file,
    GATEWAY_CORS_ORIGINS: "https://app.example",
  };
  const started = await Promise.allSettled([
    startGatewayProcess(env),
    startGatewayProcess(env, { GATEWAY_HEARTBEAT_MS: "300" }, { compiled: true }),
  ]);
  for (const outcome of started) if (outcome.status === "fulfilled") running.push(outcome.value);
  const failed = started.find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
  [gateway, compiled] = running as [GatewayProcess, GatewayProcess];
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((started) => started.process.stop(3000)));
});

const call = (key: TestKey | undefined, method: string, path: string, options = {}) =>
  callGateway(gateway.url, key?.secret, method, path, options);

/** Starts a run as `key` and waits for its answer. */
async function runAndWait(key: TestKey, body: Record<string, unknown>) {
  const answer = await call(key, "POST", "/v1/runs?wait=true", { body });
  expect(answer.status).toBe(200);
  return answer.body as {
    runId: string;
    sessionId: string;
    response: { content: Array<{ text?: string }> };
  };
}

/** Polls `GET /v1/runs/{id}` until `status`. */
async function waitForRunStatus(key: TestKey, runId: string, status: string) {
  await expect
    .poll(async () => (await call(key, "GET", `/v1/runs/${runId}`)).body.status, {
      timeout: 20_000,
      interval: 200,
    })
    .toBe(status);
}

describe("keys", () => {
  it("refuses a request without a key or with an unknown one (401), and accepts a key made by `yiem keys create`", async () => {
    const none = await call(undefined, "GET", "/v1/sessions");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthorized");
    const wrong = await callGateway(gateway.url, `${alice.secret}x`, "GET", "/v1/sessions");
    expect(wrong.status).toBe(401);
    const fromCli = await callGateway(gateway.url, cliKey.secret, "POST", "/v1/runs?wait=true", {
      body: { input: "hello cli" },
    });
    expect(fromCli.status).toBe(200);
    expect(fromCli.body.response.content[0].text).toBe("hi cli");
  });

  it("never logs a key, only its name", async () => {
    await call(alice, "GET", "/v1/agents");
    await gateway.process.waitForLine((line) => line.includes('"key":"alice"'), 15_000);
    const lines = [...gateway.process.lines, ...compiled.process.lines].join("\n");
    for (const key of keys) expect(lines).not.toContain(key.secret);
    expect(lines).not.toContain(cliKey.secret);
  });

  it("reads its keys file again when it changes: a revoked key gets 401 within seconds and its open event stream ends, an added one works, a bad file keeps the last good keys and logs why", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "yiem-gateway-reload-")), "keys.jsonl");
    const kept = makeKey("kept", { scopes: ["read"] });
    const revoked = makeKey("revoked", { scopes: ["read"], sessions: "all" });
    const added = makeKey("added", { scopes: ["read"] });
    await writeKeysFile(file, [kept, revoked]);
    const reloading = await startGatewayProcess(
      { ...env, YIEM_API_KEYS: file },
      {},
      { compiled: true },
    );
    onTestFinished(() => reloading.process.stop(1000));
    const statusOf = async (key: TestKey) =>
      (await callGateway(reloading.url, key.secret, "GET", "/v1/sessions")).status;
    expect(await statusOf(revoked)).toBe(200);
    expect(await statusOf(added)).toBe(401);
    const watched = await runAndWait(alice, { input: "hello revoked" });
    const stream = await openEventStream(
      reloading.url,
      revoked.secret,
      `/v1/sessions/${watched.sessionId}/events`,
    );
    onTestFinished(() => stream.close());
    expect(stream.status).toBe(200);
    const streamEnded = (async () => {
      for await (const _ of stream.events); // the replay, then nothing until the stream ends
    })();
    // replaced by a rename, as editors and config managers write a file
    await writeKeysFile(`${file}.next`, [kept, added]);
    await rename(`${file}.next`, file);
    await expect.poll(() => statusOf(revoked), { timeout: 10_000, interval: 200 }).toBe(401);
    expect(await statusOf(added)).toBe(200);
    expect(await statusOf(kept)).toBe(200);
    await streamEnded; // the revoked key's open event stream was ended by the gateway
    await writeFile(file, `${JSON.stringify(kept.entry)}\n{ not json\n`);
    const logged = await reloading.process.waitForLine(
      logMessage("keys file unusable: keeping the last good keys"),
      10_000,
    );
    expect(logged).toContain("line 2: not JSON");
    expect(await statusOf(added)).toBe(200); // the last good keys still serve
    expect(await statusOf(revoked)).toBe(401);
  });
});

describe("runs", () => {
  it("answers POST /v1/runs?wait=true with the job's return value, and GET /v1/runs/{id} with completed", async () => {
    const answer = await runAndWait(alice, { input: "hello alice" });
    expect(answer.response.content[0]?.text).toBe("hi alice");
    const status = await call(alice, "GET", `/v1/runs/${answer.runId}`);
    expect(status.body).toMatchObject({
      runId: answer.runId,
      sessionId: answer.sessionId,
      status: "completed",
    });
    expect(status.body.result.response.content[0].text).toBe("hi alice");
  });

  it("queues a run with 202 and continues the key's own session", async () => {
    const first = await runAndWait(alice, { input: "hello one" });
    const queued = await call(alice, "POST", "/v1/runs", {
      body: { input: "hello two", sessionId: first.sessionId },
    });
    expect(queued.status).toBe(202);
    expect(queued.body.sessionId).toBe(first.sessionId);
    await waitForRunStatus(alice, queued.body.runId, "completed");
    const session = await call(alice, "GET", `/v1/sessions/${first.sessionId}`);
    const texts = session.body.transcript.map((m: { content: unknown }) =>
      JSON.stringify(m.content),
    );
    expect(texts.filter((t: string) => t.includes("hi one") || t.includes("hi two"))).toHaveLength(
      2,
    );
    expect(session.body).toMatchObject({ agent: "default", owner: "alice" });
    expect(session.body.usage.modelCalls).toBe(2);
    // The runs are made for the key's owner: the tenant the coordinators recorded (issue 33).
    const redis = cluster.connectRedis();
    onTestFinished(() => redis.quit().then(() => undefined));
    const tenantKey = clusterKeys(cluster.redis.prefix).sessionTenant(first.sessionId);
    expect(await redis.get(tenantKey)).toBe("alice");
  });

  it("refuses an invalid body with 400 naming the field, a body that is not JSON with 415, and one over the limit with 413", async () => {
    const missing = await call(alice, "POST", "/v1/runs", { body: { sessionId: "s-1" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "invalid_request", field: "input" });
    expect(JSON.stringify(missing.body)).not.toMatch(/at .*\.ts/); // no stack
    const badBudget = await call(alice, "POST", "/v1/runs", {
      body: { input: "x", budget: { maxTokens: -1 } },
    });
    expect(badBudget.body.error.field).toBe("budget.maxTokens");
    const notJson = await call(alice, "POST", "/v1/runs", {
      rawBody: "{",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.status).toBe(400);
    const formPost = await call(alice, "POST", "/v1/runs", {
      rawBody: JSON.stringify({ input: "x" }),
      headers: { "content-type": "text/plain" },
    });
    expect(formPost.status).toBe(415); // what a browser sends cross-site without asking CORS
    const huge = await call(alice, "POST", "/v1/runs", {
      body: { input: "x".repeat(2 * 1024 * 1024) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe("body_too_large");
  });

  it("refuses with 400 a content part nesting JSON thousands of levels deep, and serves the next run (issue 34, finding 13)", async () => {
    const depth = 5_000;
    const deepPart = `{"type":"text","text":"x","extra":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const deep = await call(alice, "POST", "/v1/runs", {
      rawBody: `{"input":{"role":"user","content":[${deepPart}]}}`,
      headers: { "content-type": "application/json" },
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toMatchObject({
      code: "invalid_json",
      message: "the request body nests objects and arrays more than 64 levels deep",
    });
    const next = await call(alice, "POST", "/v1/runs?wait=true", { body: { input: "after" } });
    expect(next.status).toBe(200);
  });

  it("makes one run of a retried Idempotency-Key, and refuses the key for another body (409)", async () => {
    const headers = { "idempotency-key": `idem-${Date.now()}` };
    const body = { input: "hello once" };
    const first = await call(alice, "POST", "/v1/runs", { body, headers });
    const again = await callGateway(compiled.url, alice.secret, "POST", "/v1/runs?wait=true", {
      body,
      headers,
    });
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ runId: first.body.runId, sessionId: first.body.sessionId });
    const other = await call(alice, "POST", "/v1/runs", {
      body: { input: "hello other" },
      headers,
    });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");
    const messages = await cluster.client.messages(first.body.sessionId);
    expect(messages.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("reports a run the coordinators refused: failed with their reason, and 400 with ?wait=true", async () => {
    const queued = await call(alice, "POST", "/v1/runs", {
      body: { agent: "nosuch", input: "hello" },
    });
    expect(queued.status).toBe(202);
    await waitForRunStatus(alice, queued.body.runId, "failed");
    const status = await call(alice, "GET", `/v1/runs/${queued.body.runId}`);
    expect(status.body.error).toContain('unknown agent "nosuch"');
    const waited = await call(alice, "POST", "/v1/runs?wait=true", {
      body: { agent: "nosuch", input: "hello" },
    });
    expect(waited.status).toBe(400);
    expect(waited.body.error.code).toBe("run_refused");
  });

  it("refuses an agent the key may not use (403)", async () => {
    const refused = await call(onlyOps, "POST", "/v1/runs", { body: { input: "hello" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.field).toBe("agent");
  });
});

describe("ownership", () => {
  it("answers 404 to another key for a session, its runs, its events and its approvals", async () => {
    const own = await runAndWait(alice, { input: "hello mine" });
    const paths = [
      `/v1/sessions/${own.sessionId}`,
      `/v1/runs/${own.runId}`,
      `/v1/sessions/${own.sessionId}/events`,
      `/v1/approvals?sessionId=${own.sessionId}`,
    ];
    for (const path of paths) {
      const answer = await call(bob, "GET", path);
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code).toBe("not_found");
    }
    const unknown = await call(bob, "GET", "/v1/sessions/no-such-session");
    expect(unknown.body).toEqual({
      error: { code: "not_found", message: "session no-such-session not found" },
    });
    const mine = await call(bob, "GET", `/v1/sessions/${own.sessionId}`);
    expect(mine.body.error.message).toBe(`session ${own.sessionId} not found`); // the same words: existence is not revealed
    expect((await call(bob, "POST", `/v1/sessions/${own.sessionId}/abort`)).status).toBe(404);
    const intoIt = await call(bob, "POST", "/v1/runs", {
      body: { input: "hello", sessionId: own.sessionId },
    });
    expect(intoIt.status).toBe(404);
    const decision = await call(bob, "POST", "/v1/approvals", {
      body: { sessionId: own.sessionId, toolCallId: "c", approved: true },
    });
    expect(decision.status).toBe(404);
    const list = await call(bob, "GET", "/v1/sessions");
    expect(list.body.sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(
      own.sessionId,
    );
  });

  it("lists a key's sessions newest first; a key with sessions: all sees every one", async () => {
    const older = await runAndWait(bob, { input: "hello older" });
    const newer = await runAndWait(bob, { input: "hello newer" });
    const list = await call(bob, "GET", "/v1/sessions");
    const ids = list.body.sessions.map((s: { sessionId: string }) => s.sessionId);
    expect(ids.indexOf(newer.sessionId)).toBeLessThan(ids.indexOf(older.sessionId));
    expect(list.body.sessions[0]).toMatchObject({
      sessionId: newer.sessionId,
      agent: "default",
      owner: "bob",
    });
    expect(list.body.sessions[0].usage.modelCalls).toBe(1);
    const all = await call(auditor, "GET", "/v1/sessions?limit=100");
    const seen = all.body.sessions.map((s: { sessionId: string }) => s.sessionId);
    expect(seen).toEqual(expect.arrayContaining([older.sessionId, newer.sessionId]));
    expect((await call(auditor, "GET", `/v1/sessions/${older.sessionId}`)).status).toBe(200);
  });
});

describe("approvals and scopes", () => {
  it("lets the owner approve with its name recorded as `by`; other keys neither see nor decide; a submit-only key cannot approve", async () => {
    const started = await call(alice, "POST", "/v1/runs", { body: { input: "approve a1" } });
    const { sessionId, runId } = started.body;
    await waitForRunStatus(alice, runId, "parked");
    const pending = await call(alice, "GET", "/v1/approvals");
    const mine = pending.body.approvals.find(
      (a: { sessionId: string }) => a.sessionId === sessionId,
    );
    expect(mine).toMatchObject({ toolName: "ledgerApproval", callKey: "call-a1" });
    const bobs = await call(bob, "GET", "/v1/approvals");
    expect(bobs.body.approvals.some((a: { sessionId: string }) => a.sessionId === sessionId)).toBe(
      false,
    );
    const body = { sessionId, toolCallId: "call-a1", approved: true };
    const fromSubmitter = await call(submitter, "POST", "/v1/approvals", { body });
    expect(fromSubmitter.status).toBe(403);
    expect(fromSubmitter.body.error.code).toBe("forbidden");
    expect((await call(submitter, "GET", "/v1/approvals")).status).toBe(403);
    const approved = await call(alice, "POST", "/v1/approvals", { body });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ approved: true, by: "alice" });
    await waitForRunStatus(alice, runId, "completed");
    const twice = await call(alice, "POST", "/v1/approvals", { body });
    expect(twice.status).toBe(409);
    const events = await openEventStream(
      gateway.url,
      alice.secret,
      `/v1/sessions/${sessionId}/events`,
    );
    for await (const event of events.events) {
      if (event.event !== "toolApprovalDecided") continue;
      expect(event.data.by).toBe("alice");
      break;
    }
    events.close();
  });

  it("refuses a run to a read-only key (403)", async () => {
    const refused = await call(auditor, "POST", "/v1/runs", { body: { input: "hello" } });
    expect(refused.status).toBe(403);
  });
});

describe("abort", () => {
  it("aborts the open run of the key's session", async () => {
    const started = await call(alice, "POST", "/v1/runs", { body: { input: "sleep 20000" } });
    await waitForRunStatus(alice, started.body.runId, "running");
    const stream = await openEventStream(
      gateway.url,
      alice.secret,
      `/v1/sessions/${started.body.sessionId}/events`,
    );
    await readEvents(stream, (event) => event.event === "toolExecStart"); // the run is open, its call runs
    const aborted = await call(alice, "POST", `/v1/sessions/${started.body.sessionId}/abort`);
    expect(aborted.body).toEqual({ aborted: true, runId: started.body.runId });
    await waitForRunStatus(alice, started.body.runId, "completed");
    const status = await call(alice, "GET", `/v1/runs/${started.body.runId}`);
    expect(status.body.result.response.stopReason).toBe("aborted");
    const again = await call(alice, "POST", `/v1/sessions/${started.body.sessionId}/abort`);
    expect(again.body).toEqual({ aborted: false });
  });
});

describe("limits", () => {
  it("answers 429 with Retry-After past a key's requests per minute", async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await call(limited, "GET", "/v1/agents");
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    expect(last?.body.error.code).toBe("rate_limited");
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("answers 429 past a key's runs at once, and admits a run again once the first is answered", async () => {
    const first = await call(oneRun, "POST", "/v1/runs", { body: { input: "sleep 1500" } });
    expect(first.status).toBe(202);
    const second = await call(oneRun, "POST", "/v1/runs", { body: { input: "hello" } });
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe("too_many_runs");
    expect(second.headers.get("retry-after")).toBe("1");
    await waitForRunStatus(oneRun, first.body.runId, "completed");
    const third = await call(oneRun, "POST", "/v1/runs", { body: { input: "hello" } });
    expect(third.status).toBe(202);
  });
});

describe("the rest of the API", () => {
  it("lists the agents a key may use", async () => {
    await expect
      .poll(
        async () =>
          (await call(alice, "GET", "/v1/agents")).body.agents.map((a: { name: string }) => a.name),
        { timeout: 15_000 },
      )
      .toEqual(["default"]);
    expect((await call(onlyOps, "GET", "/v1/agents")).body.agents).toEqual([]);
  });

  it("serves an OpenAPI document made from the schemas that validate requests, without a key", async () => {
    const doc = await call(undefined, "GET", "/v1/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe("3.1.0");
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        "/v1/runs",
        "/v1/runs/{runId}",
        "/v1/sessions",
        "/v1/sessions/{id}",
        "/v1/sessions/{id}/abort",
        "/v1/sessions/{id}/events",
        "/v1/approvals",
        "/v1/agents",
      ]),
    );
    const runBody = doc.body.paths["/v1/runs"].post.requestBody.content["application/json"].schema;
    expect(runBody.required).toEqual(["input"]);
    expect(runBody.additionalProperties).toBe(false);
    expect(Object.keys(runBody.properties)).toEqual([
      "agent",
      "input",
      "sessionId",
      "followUp",
      "budget",
    ]);
    // What the document says is refused is refused: an extra property.
    const extra = await call(alice, "POST", "/v1/runs", { body: { input: "x", priority: 1 } });
    expect(extra.status).toBe(400);
    expect(doc.body.paths["/v1/approvals"].post["x-scope"]).toBe("approve");
  });

  it("answers 404 for an unknown path and 405 for a wrong method", async () => {
    expect((await call(alice, "GET", "/v1/nothing")).status).toBe(404);
    expect((await call(alice, "DELETE", "/v1/runs")).status).toBe(405);
  });

  it("allows CORS only from GATEWAY_CORS_ORIGINS", async () => {
    const allowed = await call(alice, "GET", "/v1/agents", {
      headers: { origin: "https://app.example" },
    });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await call(alice, "GET", "/v1/agents", {
      headers: { origin: "https://evil.example" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${gateway.url}/v1/runs`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
    const refused = await fetch(`${gateway.url}/v1/runs`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example" },
    });
    expect(refused.status).toBe(403);
  });
});

describe("slow clients and shutdown", () => {
  it("sheds stalled clients past its connection cap, still answers, and stops cleanly on SIGTERM with a stream open", async () => {
    const capped = await startGatewayProcess(
      env,
      { YIEM_HTTP_MAX_CONNECTIONS: "20" },
      { compiled: true },
    );
    onTestFinished(() => capped.process.stop(1000));
    const port = Number(new URL(capped.url).port);
    const stalled = await Promise.all(Array.from({ length: 40 }, () => stallOn(port)));
    const answer = await callGateway(capped.url, undefined, "GET", "/v1/openapi.json");
    expect(answer.status).toBe(200);
    await Promise.race([
      Promise.all(stalled.map((client) => client.closed)),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("stalled clients still open")), 20_000),
      ),
    ]);
    const sessionId = await startWalk(20);
    const stream = await openEventStream(
      capped.url,
      alice.secret,
      `/v1/sessions/${sessionId}/events`,
    );
    const reading = readEvents(stream);
    capped.process.signal("SIGTERM");
    expect(await capped.process.exited).toBe(0);
    const events = await reading;
    expect(events.some((e) => e.event === "agentEnd")).toBe(false); // the stream ended with the gateway
    await capped.process.waitForLine(logMessage("stopped cleanly"), 5000);
  });
});

/** The status of `GET /v1/agents` sent with `Host: host` (which fetch does not let a caller set). */
function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/v1/agents`, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.once("error", reject);
    request.end();
  });
}

/** A connection to `port` that sent half a request's headers and stalls; `closed` once the server closed it. */
function stallOn(port: number): Promise<{ closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.on("error", () => undefined); // a reset connection is a closed one
    socket.resume(); // read what the server sends (its 408), so its close is seen
    socket.once("connect", () => {
      socket.write("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      resolve({ closed });
    });
    socket.once("error", reject);
  });
}

describe("start-up", () => {
  it("refuses to listen beyond loopback without a keys file and to start with a bad one, serves loopback as the local key without one (not to other origins or host names); `yiem keys create` refuses an unknown scope and prints the line to add", async () => {
    const refused = spawnCommand(["node", "apps/gateway/dist/main.bundle.js"], {
      ...cluster.env,
      GATEWAY_HOST: "0.0.0.0",
      GATEWAY_PORT: "0",
      YIEM_API_KEYS: "",
    });
    expect(await refused.exited).toBe(1);
    const badFile = join(await mkdtemp(join(tmpdir(), "yiem-gateway-bad-")), "keys.jsonl");
    await writeFile(
      badFile,
      `${JSON.stringify(alice.entry)}\n${JSON.stringify({ ...bob.entry, scopes: ["root"] })}\n`,
    );
    const badKeys = spawnCommand(["node", "apps/gateway/dist/main.bundle.js"], {
      ...env,
      YIEM_API_KEYS: badFile,
    });
    expect(await badKeys.exited).toBe(1);
    expect(badKeys.lines.join("\n")).toContain(`YIEM_API_KEYS ${badFile}: line 2: scopes.0:`);
    const local = await startGatewayProcess({ ...env, YIEM_API_KEYS: "" }, {}, { compiled: true });
    onTestFinished(() => local.process.stop(1000));
    const open = await callGateway(local.url, undefined, "POST", "/v1/runs?wait=true", {
      body: { input: "hello local" },
    });
    expect(open.status).toBe(200); // on loopback without a keys file: the local key, every scope
    expect(
      (await callGateway(local.url, undefined, "GET", `/v1/sessions/${open.body.sessionId}`)).body
        .owner,
    ).toBe("local");
    // A page elsewhere, or a DNS name rebound to 127.0.0.1, cannot act as the local key.
    const fromPage = await callGateway(local.url, undefined, "POST", "/v1/runs", {
      body: { input: "hello" },
      headers: { origin: "https://evil.example" },
    });
    expect(fromPage.status).toBe(403);
    expect(await statusWithHost(local.url, "rebound.example:8080")).toBe(403);
    expect(await statusWithHost(local.url, "localhost:8080")).toBe(200);
    const usage = await runCli(
      ["keys", "create", "--name", "web", "--scopes", "submit,everything"],
      {},
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain(
      "--scopes: a comma-separated list of submit, read, approve, admin",
    );
    const printed = await runCli(["keys", "create", "--name", "web", "--scopes", "read"], {});
    expect(printed.stdout).toMatch(
      /key: yk_\S+\n.*\nadd this line to the keys file \(YIEM_API_KEYS\):\n\{"name":"web","hash":"sha256:[0-9a-f]{64}","scopes":\["read"\],"agents":\["\*"\],"sessions":"own"\}\n$/,
    );
    expect(refused.lines.join("\n")).toContain(
      "GATEWAY_HOST 0.0.0.0 is beyond loopback: set YIEM_API_KEYS",
    );
  });
});

/** Starts a run of `steps` steps as alice; resolves with its session. */
async function startWalk(steps: number): Promise<string> {
  const started = await callGateway(gateway.url, alice.secret, "POST", "/v1/runs", {
    body: { input: `steps ${steps}` },
  });
  expect(started.status).toBe(202);
  return started.body.sessionId as string;
}

/**
 * Reads `stream` until `agentEnd`, or until `stopAfter` returns true (then drops the
 * connection), or until the connection breaks; resolves with the events read.
 */
async function readEvents(
  stream: SseStream,
  stopAfter?: (event: SseEvent) => boolean,
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  try {
    for await (const event of stream.events) {
      events.push(event);
      if (event.event === "agentEnd") break;
      if (stopAfter?.(event)) break;
    }
  } catch {
    // the gateway went away: the client reconnects
  }
  stream.close();
  return events;
}

/** The ids of the stored events (live ones have none), as numbers. */
const idsOf = (events: SseEvent[]) =>
  events.filter((e) => e.id !== undefined).map((e) => Number(e.id));

/** The types of the events a session stores (each has an id). */
const STORED_EVENT_TYPES = [
  "agentStart",
  "turnStart",
  "messageEnd",
  "toolExecStart",
  "toolExecUpdate",
  "toolExecEnd",
  "toolApprovalRequested",
  "toolApprovalDecided",
  "turnEnd",
  "agentEnd",
];

/** 1, 2, …, n. */
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("session events over SSE", () => {
  it("replays then follows a run live: numbered stored events, streamed text without ids, heartbeats", async () => {
    const sessionId = await startWalk(8);
    const stream = await openEventStream(
      compiled.url,
      alice.secret,
      `/v1/sessions/${sessionId}/events`,
    );
    expect(stream.status).toBe(200);
    const events = await readEvents(stream);
    const ids = idsOf(events);
    expect(ids).toEqual(oneTo(ids.length));
    for (const event of events.filter((e) => e.id !== undefined)) {
      expect(event.data.seq).toBe(Number(event.id));
      expect(event.data.type).toBe(event.event);
    }
    expect(events.filter((e) => e.event === "toolExecUpdate")).toHaveLength(8);
    const live = events.filter((e) => e.event === "messageUpdate");
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((e) => e.id === undefined && e.data.live === true)).toBe(true);
    expect(events.at(-1)?.event).toBe("agentEnd");
    expect(stream.comments).toContain("heartbeat");
  });

  it("resumes a dropped connection from Last-Event-ID, and from ?from=, with no gap and no duplicate", async () => {
    const sessionId = await startWalk(10);
    const path = `/v1/sessions/${sessionId}/events`;
    const first = await readEvents(
      await openEventStream(gateway.url, alice.secret, path),
      (event) => Number(event.id ?? 0) >= 4,
    );
    const lastId = String(idsOf(first).at(-1));
    const second = await readEvents(
      await openEventStream(gateway.url, alice.secret, path, { lastEventId: lastId }),
    );
    const ids = [...idsOf(first), ...idsOf(second)];
    expect(ids).toEqual(oneTo(ids.length));
    expect(second.at(-1)?.event).toBe("agentEnd");
    const fromQuery = await readEvents(
      await openEventStream(gateway.url, alice.secret, `${path}?from=${lastId}`),
    );
    expect(idsOf(fromQuery)).toEqual(idsOf(second));
  });

  it("answers 404 for another key's session events", async () => {
    const sessionId = await startWalk(1);
    const stream = await openEventStream(
      gateway.url,
      bob.secret,
      `/v1/sessions/${sessionId}/events`,
    );
    expect(stream.status).toBe(404);
    stream.close();
  });

  it("opens with an event-stream token (as EventSource, which sends no headers), for its session only", async () => {
    const sessionId = await startWalk(1);
    const other = await startWalk(1);
    const made = await call(alice, "POST", `/v1/sessions/${sessionId}/events/token`);
    expect(made.status).toBe(200);
    expect(made.body.url).toBe(`/v1/sessions/${sessionId}/events?token=${made.body.token}`);
    const opened = await fetch(`${gateway.url}${made.body.url}`);
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
    const elsewhere = await fetch(
      `${gateway.url}/v1/sessions/${other}/events?token=${made.body.token}`,
    );
    expect(elsewhere.status).toBe(404);
    expect(
      (await fetch(`${gateway.url}/v1/sessions/${sessionId}/events?token=yst_forged`)).status,
    ).toBe(401);
    expect(
      (await fetch(`${gateway.url}/v1/sessions/${sessionId}?token=${made.body.token}`)).status,
    ).toBe(401);
    expect((await call(bob, "POST", `/v1/sessions/${sessionId}/events/token`)).status).toBe(404);
    const lines = [...gateway.process.lines].join("\n");
    expect(lines).not.toContain(made.body.token);
  });

  it("lets an EventSource behind a load balancer resume on another gateway after its gateway is SIGKILLed mid-stream", async () => {
    const doomed = await startGatewayProcess(env, {}, { compiled: true });
    onTestFinished(() => doomed.process.stop(1000));
    const sessionId = await startWalk(12);
    const made = await call(alice, "POST", `/v1/sessions/${sessionId}/events/token`);
    let backend = doomed.url; // where the "load balancer" sends each connection
    const connections: string[] = [];
    const source = new EventSource(`http://balancer.invalid${made.body.url}`, {
      fetch: (input, init) => {
        connections.push(backend);
        return fetch(String(input).replace("http://balancer.invalid", backend), init);
      },
    });
    const ids: number[] = [];
    const ended = new Promise<void>((resolve) => {
      for (const type of STORED_EVENT_TYPES) {
        source.addEventListener(type, (event: MessageEvent) => {
          ids.push(Number(event.lastEventId));
          if (ids.length === 5) {
            backend = compiled.url;
            doomed.process.signal("SIGKILL");
          }
          if (type === "agentEnd") resolve();
        });
      }
    });
    await ended;
    source.close();
    expect(await doomed.process.exited).toBe(null); // killed by the signal
    expect(connections[0]).toBe(doomed.url);
    expect(connections.at(-1)).toBe(compiled.url);
    expect(ids).toEqual(oneTo(ids.length));
    const replay = await readEvents(
      await openEventStream(gateway.url, alice.secret, `/v1/sessions/${sessionId}/events`),
    );
    expect(idsOf(replay)).toEqual(ids);
  });
});
