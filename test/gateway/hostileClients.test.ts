/**
 * Attacks on the gateway by clients that hold its resources, each through its public HTTP
 * interface against a real cluster (Redis, a coordinator, a worker) and compiled gateway
 * processes: readers that stop reading (its memory stays bounded; a cut reader resumes from
 * Last-Event-ID with every event once), one key's streams and waits filling the connection
 * cap (other keys unaffected), an event-stream token outliving its key's rotation (and
 * renewed by use), and an empty keys file read mid-write (every key refused).
 */
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterKeys, connectRedis, hashApiKey } from "@yiem/core";
import { logMessage, type ScriptedReply, type ScriptedRequest } from "@yiem/testing";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  openEventStream,
  type SseEvent,
  startGatewayProcess,
  type TestKey,
  type Wire,
  writeKeysFile,
} from "./support.js";

/** Characters of each `big` answer: 12 of them stay well inside a session's 8 MiB stream. */
const BIG_ANSWER_CHARS = 128 * 1024;

/**
 * The model: `big <n>` answers `n` followed by `BIG_ANSWER_CHARS` characters (in 4 deltas);
 * `slow <ms>` answers after `ms`; anything else answers `ok`.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const [verb = "", arg = ""] = text.split(" ");
  if (verb === "big") {
    return { kind: "text", text: `${arg}:${"x".repeat(BIG_ANSWER_CHARS)}`, textChunks: 4 };
  }
  if (verb === "slow") return { kind: "text", text: "late", delayMs: Number(arg) };
  return { kind: "text", text: "ok" };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

/** Every gateway a test started, stopped after the file. */
const running: GatewayProcess[] = [];

afterAll(async () => {
  await Promise.all(running.map((gateway) => gateway.process.stop(3000)));
});

/** Starts a compiled gateway serving `keys` (its keys file returned too), with `extra` env. */
async function startGateway(
  keys: TestKey[],
  extra: Record<string, string> = {},
): Promise<{ gateway: GatewayProcess; file: string }> {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-hostile-")), "keys.jsonl");
  await writeKeysFile(file, keys);
  const gateway = await startGatewayProcess(
    { ...cluster.env, YIEM_API_KEYS: file, LOG_LEVEL: "info" },
    extra,
    { compiled: true },
  );
  running.push(gateway);
  return { gateway, file };
}

/** Starts a run as `key` and waits for its answer; its ids. */
async function runAndWait(gateway: GatewayProcess, key: TestKey, body: Record<string, unknown>) {
  const answer = await callGateway(gateway.url, key.secret, "POST", "/v1/runs?wait=true", {
    body,
  });
  expect(answer.status).toBe(200);
  return answer.body as { runId: string; sessionId: string };
}

/** The resident and peak resident memory of process `pid`, in bytes (`/proc/<pid>/status`). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kib("VmRSS") * 1024, peak: kib("VmHWM") * 1024 };
}

/**
 * A request whose answer is never read: `GET path` on a connection of its own; once the
 * status line is in, the response is paused, so the socket stops reading and the kernel's
 * buffers fill. `status` resolves with the answer's status; `resume` reads on and resolves
 * with everything the body carried once the server closed the connection.
 */
interface StalledReader {
  status: Promise<number>;
  resume(): Promise<string>;
  close(): void;
}

function openStalledReader(url: string, secret: string, path: string): StalledReader {
  let response: IncomingMessage | undefined;
  let request: ClientRequest | undefined;
  const status = new Promise<number>((resolve, reject) => {
    request = httpRequest(
      `${url}${path}`,
      { agent: false, headers: { authorization: `Bearer ${secret}` } },
      (res) => {
        response = res;
        res.pause();
        resolve(res.statusCode ?? 0);
      },
    );
    request.once("error", reject);
    request.end();
  });
  return {
    status,
    resume: () =>
      new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        response?.on("data", (chunk: Buffer) => chunks.push(chunk));
        response?.on("error", () => undefined); // a connection cut mid-body is the end
        response?.once("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
        response?.resume();
      }),
    close: () => request?.destroy(),
  };
}

/** The ids of the whole events in `text` (an SSE body, maybe cut mid-event). */
function completeEventIds(text: string): number[] {
  const whole = text.slice(0, text.lastIndexOf("\n\n") + 2);
  return [...whole.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
}

/** Reads `stream` until `isLast`, as the events' ids (stored events only). */
async function readIdsUntil(
  events: AsyncGenerator<SseEvent>,
  isLast: (event: SseEvent) => boolean,
): Promise<number[]> {
  const ids: number[] = [];
  for await (const event of events) {
    if (event.id !== undefined) ids.push(Number(event.id));
    if (isLast(event)) break;
  }
  return ids;
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("readers that stop reading", () => {
  it("keeps the gateway's memory bounded while 40 stalled readers of one session miss 12 runs of 128 KiB answers, and cuts them: a cut reader resumes from Last-Event-ID with every event exactly once", async () => {
    const owner = makeKey("owner", { scopes: ["submit", "read"] });
    const { gateway } = await startGateway([owner], {
      GATEWAY_STREAM_QUEUE_EVENTS: "8",
      GATEWAY_STREAM_QUEUE_BYTES: "65536",
    });
    const first = await runAndWait(gateway, owner, { input: "hello" });
    const path = `/v1/sessions/${first.sessionId}/events`;
    const readers = Array.from({ length: 40 }, () =>
      openStalledReader(gateway.url, owner.secret, path),
    );
    onTestFinished(() => {
      for (const reader of readers) reader.close();
    });
    expect(await Promise.all(readers.map((reader) => reader.status))).toEqual(
      readers.map(() => 200),
    );
    const before = memoryOf(gateway.process.pid);
    let last = first;
    for (let n = 1; n <= 12; n++) {
      // each run's events reach every reader live
      last = await runAndWait(gateway, owner, { input: `big ${n}`, sessionId: first.sessionId });
    }
    const after = memoryOf(gateway.process.pid);
    // Unbounded, each stalled reader held every event of the 12 runs: over 150 MiB in all.
    expect(after.peak - before.rss).toBeLessThan(64 * 1024 * 1024);
    await gateway.process.waitForLine(logMessage("event stream reader cut"), 15_000);
    const taken = completeEventIds((await readers[0]?.resume()) ?? "");
    expect(taken).toEqual(oneTo(taken.length));
    const resumed = await openEventStream(gateway.url, owner.secret, path, {
      lastEventId: String(taken.at(-1) ?? 0),
    });
    onTestFinished(() => resumed.close());
    const rest = await readIdsUntil(
      resumed.events,
      (event) => event.event === "agentEnd" && event.data.runId === last.runId,
    );
    const ids = [...taken, ...rest];
    expect(ids).toEqual(oneTo(ids.length));
    expect(rest.length).toBeGreaterThan(0);
  }, 90_000); // twelve runs of 128 KiB answers through 40 readers: slow on a loaded machine
});

describe("one key's streams and waits", () => {
  it("caps each key's open streams and waiting requests below the connection cap (429 for that key), so another key's requests still get in", async () => {
    const greedy = makeKey("greedy", { scopes: ["submit", "read"] });
    const other = makeKey("other", { scopes: ["submit", "read"] });
    // 40 connections: 10 event streams and 5 waiting requests per key
    const { gateway } = await startGateway([greedy, other], { YIEM_HTTP_MAX_CONNECTIONS: "40" });
    const { sessionId } = await runAndWait(gateway, greedy, { input: "hello" });
    const path = `/v1/sessions/${sessionId}/events`;
    const streams = Array.from({ length: 40 }, () =>
      openStalledReader(gateway.url, greedy.secret, path),
    );
    onTestFinished(() => {
      for (const stream of streams) stream.close();
    });
    const statuses = await Promise.all(streams.map((stream) => stream.status));
    // Uncapped, the 40 streams held every connection: the other key's were reset.
    const own = await runAndWait(gateway, other, { input: "hello" });
    const watched = await openEventStream(
      gateway.url,
      other.secret,
      `/v1/sessions/${own.sessionId}/events`,
    );
    onTestFinished(() => watched.close());
    expect(watched.status).toBe(200);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    const refused = await callGateway(gateway.url, greedy.secret, "GET", `${path}?from=0`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("too_many_streams");
    expect(refused.body.error.message).toContain("GATEWAY_KEY_MAX_STREAMS");
    const waits = Array.from({ length: 5 }, () =>
      callGateway(gateway.url, greedy.secret, "POST", "/v1/runs?wait=true", {
        body: { input: "slow 8000" },
      }),
    );
    await expect
      .poll(
        async () =>
          (await callGateway(gateway.url, greedy.secret, "GET", "/v1/sessions")).body.sessions
            .length,
        { timeout: 15_000, interval: 100 },
      )
      .toBe(6); // the five waiting runs are recorded: their slots are taken
    const sixth = await callGateway(gateway.url, greedy.secret, "POST", "/v1/runs?wait=true", {
      body: { input: "hello" },
    });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe("too_many_long_requests");
    expect((await runAndWait(gateway, other, { input: "hello" })).runId).toBeTruthy();
    expect((await Promise.all(waits)).map((answer) => answer.status)).toEqual([
      200, 200, 200, 200, 200,
    ]);
  });
});

describe("event-stream tokens", () => {
  it("stop working when their key is rotated (same name, new hash), and are never renewed by use", async () => {
    const holder = makeKey("holder", { scopes: ["submit", "read"] });
    const { gateway, file } = await startGateway([holder]);
    const { sessionId } = await runAndWait(gateway, holder, { input: "hello" });
    const made = await callGateway(
      gateway.url,
      holder.secret,
      "POST",
      `/v1/sessions/${sessionId}/events/token`,
    );
    expect(made.status).toBe(200);
    const redis = connectRedis(cluster.env.REDIS_URL ?? "");
    onTestFinished(() => redis.quit().then(() => undefined));
    const tokenKey = clusterKeys(cluster.env.YIEM_PREFIX ?? "").streamToken(
      hashApiKey(made.body.token),
    );
    await redis.expire(tokenKey, 120);
    const statusOfToken = async () => {
      const opened = await fetch(`${gateway.url}${made.body.url}`);
      await opened.body?.cancel();
      return opened.status;
    };
    expect(await statusOfToken()).toBe(200);
    expect(await redis.ttl(tokenKey)).toBeLessThanOrEqual(120); // a use renews nothing
    const rotated = { ...makeKey("holder", { scopes: ["submit", "read"] }) };
    await writeKeysFile(file, [rotated]);
    await expect
      .poll(
        async () => (await callGateway(gateway.url, holder.secret, "GET", "/v1/sessions")).status,
        { timeout: 10_000, interval: 200 },
      )
      .toBe(401);
    expect(await statusOfToken()).toBe(401);
    expect((await callGateway(gateway.url, rotated.secret, "GET", "/v1/sessions")).status).toBe(
      200,
    );
  });
});

describe("the keys file read mid-write", () => {
  it("keeps the last good keys when the file is empty (a truncate before the write) and logs why; `[]` serves no key on purpose", async () => {
    const steady = makeKey("steady", { scopes: ["submit", "read"] });
    const { gateway, file } = await startGateway([steady]);
    const { sessionId } = await runAndWait(gateway, steady, { input: "hello" });
    const stream = await openEventStream(
      gateway.url,
      steady.secret,
      `/v1/sessions/${sessionId}/events`,
    );
    onTestFinished(() => stream.close());
    expect(stream.status).toBe(200);
    await writeFile(file, "");
    const logged = await gateway.process.waitForLine(
      logMessage("keys file unusable: keeping the last good keys"),
      10_000,
    );
    expect(logged).toContain("has no key (empty)");
    expect((await callGateway(gateway.url, steady.secret, "GET", "/v1/sessions")).status).toBe(200);
    const next = await runAndWait(gateway, steady, { input: "hello", sessionId });
    const ids = await readIdsUntil(
      stream.events,
      (event) => event.event === "agentEnd" && event.data.runId === next.runId,
    );
    expect(ids.length).toBeGreaterThan(0); // the open stream was not cut
    await writeFile(file, "# no key on purpose\n[]\n");
    await expect
      .poll(
        async () => (await callGateway(gateway.url, steady.secret, "GET", "/v1/sessions")).status,
        { timeout: 10_000, interval: 200 },
      )
      .toBe(401);
  });
});
