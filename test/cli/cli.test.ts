import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { repoRoot } from "../support/processes.js";
import { freePort, startTestRedis } from "../support/redisServer.js";
import type { ScriptedReply, ScriptedRequest } from "../support/scriptedModelServer.js";

/** `parallel` → two sleepFor calls with progress; `waitme` → waitForAbort; after tools, their results; else an echo. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: `results: ${results.slice(-2).join(" | ")}` };
  }
  const text = String(last?.content ?? "");
  if (text === "parallel") {
    return {
      kind: "toolCalls",
      calls: [
        { id: "a", name: "sleepFor", arguments: { ms: 400, label: "alpha", steps: 2 } },
        { id: "b", name: "sleepFor", arguments: { ms: 600, label: "beta", steps: 2 } },
      ],
    };
  }
  if (text === "waitme")
    return {
      kind: "toolCalls",
      calls: [{ id: "w", name: "waitForAbort", arguments: { label: "cli" } }],
    };
  return { kind: "text", text: `echo: ${text}` };
}

interface CliRun {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Starts `yiem` as a real process; `waitFor` resolves once stdout matches. */
function startCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ["apps/cli/bin/yiem.js", ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  const watchers = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString("utf8");
    for (const watcher of watchers) watcher();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString("utf8");
  });
  const done = new Promise<CliRun>((resolve) =>
    child.once("exit", (code) => resolve({ ...out, code })),
  );
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve) => {
      const check = () => {
        const match = out.stdout.match(pattern);
        if (!match) return;
        watchers.delete(check);
        resolve(match);
      };
      watchers.add(check);
      check();
    });
  return { done, waitFor, interrupt: () => child.kill("SIGINT") };
}

function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return startCli(args, env).done;
}

function sessionOf(stdout: string): string {
  const id = stdout.match(/^session ([0-9a-f-]{36})/m)?.[1];
  expect(id).toBeDefined();
  return id ?? "";
}

const cluster = useTestCluster({ workers: 2, model: { respond } });

describe("yiem against a running cluster", () => {
  it("send shows each call's end with its worker and duration, then the answer, and exits 0", async () => {
    const run = await runCli(["send", "parallel"], cluster.env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /✔ sleepFor\(.*"label":"alpha".*\) on worker-[12] \d+ ms — alpha done/,
    );
    expect(run.stdout).toMatch(
      /✔ sleepFor\(.*"label":"beta".*\) on worker-[12] \d+ ms — beta done/,
    );
    const ms = [...run.stdout.matchAll(/on worker-[12] (\d+) ms/g)].map((m) => Number(m[1]));
    expect(Math.max(...ms)).toBeGreaterThanOrEqual(550);
    expect(run.stdout).toContain("results: alpha done | beta done");
    expect(run.stdout).toMatch(/✔ stop in/);
    sessionOf(run.stdout);
  });

  it("send --json prints one JSON line per event, then the response", async () => {
    const run = await runCli(["send", "--json", "parallel"], cluster.env);
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const types = lines.map((line) => line.type);
    expect(types).toEqual(
      expect.arrayContaining(["agentStart", "toolExecStart", "toolExecUpdate", "toolExecEnd"]),
    );
    expect(types.slice(-2)).toEqual(["agentEnd", "response"]);
    const response = lines.at(-1);
    expect(response.response.stopReason).toBe("stop");
    expect(response.response.content[0].text).toBe("results: alpha done | beta done");
    expect(lines.every((line) => line.sessionId === response.sessionId)).toBe(true);
  });

  it("send --session follows up on an earlier session, showing only the new run", async () => {
    const first = await runCli(["send", "parallel"], cluster.env);
    const sessionId = sessionOf(first.stdout);
    const second = await runCli(["send", "--session", sessionId, "hello", "again"], cluster.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("echo: hello again");
    expect(second.stdout).not.toContain("sleepFor");
    expect(sessionOf(second.stdout)).toBe(sessionId);
    const messages = await cluster.client.messages(sessionId);
    expect(messages.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("workers lists both workers", async () => {
    const run = await runCli(["workers"], cluster.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^WORKER\s+QUEUES\s+TOOLS\s+RUNNING\s+LAST SEEN/);
    expect(run.stdout).toMatch(/^worker-1\s+default\s+\d+\s+\d+\/\d+\s+\d+ s ago/m);
    expect(run.stdout).toMatch(/^worker-2\s+default/m);
  });

  it("abort ends a running send with stopReason aborted and exit code 1", async () => {
    const send = startCli(["send", "waitme"], cluster.env);
    await send.waitFor(/… waitForAbort on worker-[12]/);
    const sessionId = (await send.waitFor(/^session ([0-9a-f-]{36})/m))[1] ?? "";
    const abort = await runCli(["abort", sessionId], cluster.env);
    expect(abort.code).toBe(0);
    expect(abort.stdout).toContain(`Abort sent to session ${sessionId}`);
    const run = await send.done;
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/✖ aborted/);
  });

  it("send --follow-up behind a quiet run waits for it instead of reporting no coordinator", async () => {
    const first = startCli(["send", "waitme"], cluster.env);
    await first.waitFor(/… waitForAbort on worker-[12]/);
    const sessionId = (await first.waitFor(/^session ([0-9a-f-]{36})/m))[1] ?? "";
    const env = { ...cluster.env, YIEM_COORDINATOR_WAIT_S: "1" };
    const followUp = startCli(["send", "--session", sessionId, "--follow-up", "after"], env);
    await new Promise((resolve) => setTimeout(resolve, 2500)); // beyond the 1 s wait
    await runCli(["abort", sessionId], cluster.env);
    expect((await first.done).code).toBe(1);
    const run = await followUp.done;
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("echo: after");
    expect(run.stdout).not.toContain("waitForAbort"); // the run before it is not shown
  });

  it("watch replays a session, follows it live, and stops on Ctrl-C with exit code 130", async () => {
    const sessionId = sessionOf((await runCli(["send", "first"], cluster.env)).stdout);
    const watch = startCli(["watch", sessionId, "--from-start"], cluster.env);
    await watch.waitFor(/echo: first/);
    expect((await runCli(["send", "--session", sessionId, "parallel"], cluster.env)).code).toBe(0);
    await watch.waitFor(/results: alpha done \| beta done/);
    watch.interrupt();
    const run = await watch.done;
    expect(run.code).toBe(130);
    expect(run.stdout).toMatch(/^> parallel$/m);
    expect(run.stdout).toMatch(/✔ sleepFor\(.*\) on worker-[12] \d+ ms — alpha done/);
  });
});

describe("yiem reports setup problems in one line", () => {
  it("exits 2 with a one-line error when Redis is unreachable", async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const run = await runCli(["send", "hello"], { REDIS_URL: url });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^yiem: Redis unreachable at redis:\/\/127\.0\.0\.1:\d+: .+\. Set REDIS_URL or start redis-server\.\n$/,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("exits 2 when no coordinator picks the message up, and says it stays queued", async () => {
    const redis = await startTestRedis();
    try {
      const env = { REDIS_URL: redis.url, YIEM_PREFIX: redis.prefix, YIEM_COORDINATOR_WAIT_S: "2" };
      const run = await runCli(["send", "hello"], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /^yiem: no coordinator picked up the message within 2 s: is one running\? \(npm run coordinator\)/,
      );
      expect(run.stderr).toContain("stays queued");
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await redis.stop();
    }
  });

  it("exits 2 with the usage line for an unknown command or flag", async () => {
    const unknown = await runCli(["frobnicate"], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^yiem: unknown command "frobnicate"\nusage: yiem /);
    const badFlag = await runCli(["send", "--bogus", "hi"], {});
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/usage: yiem send "message"/);
  });
});
