import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { freePort, type ScriptedReply, type ScriptedRequest, startTestRedis } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { type CliRun, runCli, startCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { repoRoot } from "../support/processes.js";

/**
 * Text wrapped in the sequences a hostile model or tool may send: an OSC 52 clipboard write,
 * an OSC 0 title change, a clear-screen, a carriage return, a C1 CSI and a DEL.
 */
function hostile(text: string): string {
  return `\x1b]52;c;ZXZpbA==\x07${text}\x1b]0;pwned\x07\x1b[2J\r\x9b2J\x7f`;
}

const HOSTILE_ANSWER = `answer-visible ${hostile("")} still-visible\nsecond-line`;

/** `escapes`: an unknown tool and echoText, both carrying escape sequences, then a hostile answer. */
function hostileReply(messages: Array<{ role: string; content: unknown }>): ScriptedReply {
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: HOSTILE_ANSWER };
  return {
    kind: "toolCalls",
    calls: [
      { id: "x1", name: hostile("ghost"), arguments: {} },
      {
        id: "x2",
        name: "echoText",
        arguments: { note: "\x9bargs-visible", text: hostile("tool-visible") },
      },
    ],
  };
}

/** The answer `stream` gets, in four deltas of twelve characters, 400 ms apart. */
const STREAMED_PIECES = ["streamed-one", "streamed-two", "streamed-3rd", "streamed-end"];

/** `tool-then-error`: a call of a tool no one has, then the model fails on its result. */
function toolThenError(messages: Array<{ role: string }>): ScriptedReply {
  if (messages.at(-1)?.role === "tool")
    return { kind: "httpError", status: 400, message: "model-gave-up" };
  return { kind: "toolCalls", calls: [{ id: "t1", name: "noSuchTool", arguments: {} }] };
}

/**
 * `parallel` → two sleepFor calls with progress; `waitme` → waitForAbort; `escapes` and
 * `escapes-error` → hostile text; `stream` → an answer streamed slowly; `tool-then-error` →
 * a failed call, then a model error; after tools, their results; else an echo.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  const lastInput = messages.filter((m) => m.role === "user").at(-1)?.content;
  if (lastInput === "escapes") return hostileReply(messages);
  if (lastInput === "escapes-error")
    return { kind: "httpError", status: 400, message: hostile("model-error-visible") };
  if (lastInput === "stream")
    return { kind: "text", text: STREAMED_PIECES.join(""), textChunks: 4, chunkDelayMs: 400 };
  if (lastInput === "tool-then-error") return toolThenError(messages);
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

/** True where util-linux `script` can give a command a pseudo-terminal. */
const canRunOnTerminal =
  process.platform === "linux" && spawnSync("script", ["--version"]).status === 0;

/** Runs `yiem` on a pseudo-terminal (util-linux `script`); all it printed comes as `stdout`. */
function runCliOnTerminal(args: string[], env: Record<string, string>): Promise<CliRun> {
  const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, "apps/cli/bin/yiem.js", ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ ...out, code })));
}

/** The control characters in `output` other than newline and tab, as `\xNN`, once each. */
function controlCharsIn(output: string): string[] {
  const found = [...output].filter((char) => {
    const code = char.charCodeAt(0);
    return (code < 0x20 && char !== "\n" && char !== "\t") || (code >= 0x7f && code <= 0x9f);
  });
  return [...new Set(found)].map((char) => `\\x${char.charCodeAt(0).toString(16)}`);
}

/** Fails when `output` holds any sequence the hostile text carried (OSC, clear-screen, BEL, C1). */
function expectNoHostileSequence(output: string): void {
  expect(output).not.toContain("\x1b]");
  expect(output).not.toContain("\x1b[2J");
  expect(output).not.toContain("\x07");
  expect(controlCharsIn(output).filter((hex) => /\\x[89]/.test(hex))).toEqual([]); // C1
}

/** What a CLI run printed that a terminal would act on (nothing, on a pipe: no spinner). */
function expectNoTerminalControl(run: CliRun): void {
  for (const output of [run.stdout, run.stderr]) {
    expectNoHostileSequence(output);
    expect(controlCharsIn(output)).toEqual([]);
  }
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
    // Workers on the default queue also serve the own queues of the limited tools they have.
    expect(run.stdout).toMatch(
      /^worker-1\s+default,tool\.limitedStep,tool\.ratedStep\s+\d+\s+\d+\/\d+\s+\d+ s ago/m,
    );
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

  it("send prints the answer as the model streams it, and prints it once", async () => {
    const send = startCli(["send", "stream"], cluster.env);
    const [early = ""] = await send.waitFor(/streamed-one.*/); // the line as printed so far
    expect(early).not.toContain("streamed-end"); // the first piece came before the last was written
    const run = await send.done;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`\n${STREAMED_PIECES.join("")}\n\n✔ stop in`);
    expect(run.stdout.split("streamed-3rd")).toHaveLength(2); // the answer once
  });

  it("send --json has the streamed pieces as live messageUpdate events; a replay has none", async () => {
    const run = await runCli(["send", "--json", "stream"], cluster.env);
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const updates = lines.filter((line) => line.type === "messageUpdate");
    expect(updates.map((u) => u.delta)).toEqual(STREAMED_PIECES);
    expect(updates.every((u) => u.live === true)).toBe(true);
    const seqs = lines.filter((line) => !line.live && line.seq !== undefined).map((l) => l.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1)); // the stored events stay 1, 2, 3… without a gap
    const replayed: string[] = [];
    for await (const event of cluster.client.events(lines[0].sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    }))
      replayed.push(event.type);
    expect(replayed).not.toContain("messageUpdate");
    expect(replayed).toHaveLength(seqs.length);
  });

  it("send exits 1 when a tool call failed and the run then ended in an error", async () => {
    const run = await runCli(["send", "tool-then-error"], cluster.env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✖ noSuchTool\(\{\}\) \d+ ms — Tool "noSuchTool" not found/m);
    expect(run.stdout).toMatch(/^✖ error in .*model-gave-up/m);
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

describe("yiem never passes a model's or a tool's control characters to the terminal", () => {
  it("send escapes them in the answer, a tool name, its arguments, progress and result, keeping the text around them", async () => {
    const run = await runCli(["send", "escapes"], cluster.env);
    expect(run.code).toBe(0);
    expectNoTerminalControl(run);
    expect(run.stdout).toMatch(/^✖ \\x1b\]52;c;ZXZpbA==\\x07ghost.* — Tool ".*ghost/m);
    expect(run.stdout).toMatch(/^→ echoText\(\{"note":"\\x9bargs-visible","text":".*\) started$/m);
    expect(run.stdout).toMatch(/^ {2}… echoText on worker-[12] .*tool-visible/m);
    expect(run.stdout).toMatch(/^✔ echoText\(.*\) on worker-[12] \d+ ms — .*tool-visible/m);
    expect(run.stdout).toContain("answer-visible \\x1b]52;c;ZXZpbA==\\x07\\x1b]0;pwned\\x07");
    expect(run.stdout).toMatch(/still-visible\nsecond-line\n/);
  });

  it.skipIf(!canRunOnTerminal)(
    "send on a terminal spins a status while it waits (coordinator, model, calls), and not on a pipe",
    async () => {
      const run = await runCliOnTerminal(["send", "parallel"], cluster.env);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("waiting for a coordinator…");
      expect(run.stdout).toContain("waiting for the model…");
      expect(run.stdout).toMatch(/running sleepFor\(.*"label":"alpha".*\) on worker-[12]/);
      expect(run.stdout).toContain("results: alpha done | beta done");
      const piped = await runCli(["send", "parallel"], cluster.env);
      expect(piped.stdout).not.toContain("waiting for");
      expect(piped.stdout).not.toContain("running sleepFor");
    },
  );

  it.skipIf(!canRunOnTerminal)(
    "send on a terminal streams the answer and prints it once",
    async () => {
      const run = await runCliOnTerminal(["send", "stream"], cluster.env);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(STREAMED_PIECES.join(""));
      expect(run.stdout.split("streamed-3rd")).toHaveLength(2);
    },
  );

  it.skipIf(!canRunOnTerminal)(
    "send on a terminal still draws and clears its own spinner lines, and escapes the model's sequences",
    async () => {
      const run = await runCliOnTerminal(["send", "escapes"], cluster.env);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("\x1b[1A\x1b[0J"); // the spinner clearing its line: the CLI's own
      expectNoHostileSequence(run.stdout);
      expect(run.stdout).toContain("answer-visible \\x1b]52;c;ZXZpbA==\\x07");
      expect(run.stdout).toMatch(/✔ echoText\(.*\) on worker-[12] \d+ ms — .*tool-visible/);
    },
  );

  it("send --json escapes them as \\u00XX and a JSON reader still gets the model's exact text", async () => {
    const run = await runCli(["send", "--json", "escapes"], cluster.env);
    expect(run.code).toBe(0);
    expectNoTerminalControl(run);
    const lines = run.stdout.trim().split("\n");
    const response = JSON.parse(lines.at(-1) ?? "{}");
    expect(response.response.content[0].text).toBe(HOSTILE_ANSWER);
  });

  it("send escapes them in a model error's message", async () => {
    const run = await runCli(["send", "escapes-error"], cluster.env);
    expect(run.code).toBe(1);
    expectNoTerminalControl(run);
    expect(run.stdout).toMatch(/^✖ error in .*model-error-visible/m);
  });

  it("watch --from-start escapes them when it replays the session", async () => {
    const sessionId = sessionOf((await runCli(["send", "escapes"], cluster.env)).stdout);
    const watch = startCli(["watch", sessionId, "--from-start"], cluster.env);
    await watch.waitFor(/still-visible/);
    watch.interrupt();
    const run = await watch.done;
    expect(run.code).toBe(130);
    expectNoTerminalControl(run);
    expect(run.stdout).toMatch(/^> escapes$/m);
    expect(run.stdout).toMatch(/^✖ .*ghost/m);
    expect(run.stdout).toMatch(/^✔ echoText\(.*\) on worker-[12] \d+ ms — .*tool-visible/m);
    expect(run.stdout).toContain("answer-visible");
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
      const sessionId = run.stdout.match(/^session (\S+)/m)?.[1] ?? "";
      const watch = startCli(["watch", sessionId], env); // as the message suggests: a known session
      await watch.waitFor(/^watching session /m);
      watch.interrupt();
      expect((await watch.done).code).toBe(130);
    } finally {
      await redis.stop();
    }
  });

  it("exits 2 with 'unknown session' for abort and watch of a session the cluster never saw", async () => {
    const sessionId = randomUUID();
    const abort = await runCli(["abort", sessionId], cluster.env);
    expect(abort.code).toBe(2);
    expect(abort.stderr).toBe(`yiem: unknown session ${sessionId}\n`);
    expect(abort.stdout).toBe("");
    const watch = await runCli(["watch", sessionId, "--from-start"], cluster.env);
    expect(watch.code).toBe(2);
    expect(watch.stderr).toBe(`yiem: unknown session ${sessionId}\n`);
  });

  it("--version prints the version of apps/cli/package.json", async () => {
    const { version } = JSON.parse(readFileSync(`${repoRoot}/apps/cli/package.json`, "utf8"));
    const run = await runCli(["--version"], {});
    expect(run).toEqual({ stdout: `yiem ${version}\n`, stderr: "", code: 0 });
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
