import { readFileSync } from "node:fs";
import type { ExecutedOutcome } from "@yiem/core";
import { executePreparedToolCall } from "@yiem/core";
import {
  checkSandboxCode,
  runInSandbox,
  type SandboxOutcome,
  SandboxSlots,
  toAgentTool,
} from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { firstText, sleep } from "../support/toolFixtures.js";

/** Runs `code` as the written tool `probe`, through the real pipeline step that executes calls. */
async function callWrittenTool(
  code: string,
  args: Record<string, unknown> = {},
  limits: { timeoutMs?: number } = {},
): Promise<ExecutedOutcome> {
  const tool = toAgentTool(
    {
      name: "probe",
      label: "Probe",
      description: "test",
      inputSchema: { type: "object" },
      code,
      parallel: false,
      hash: "test",
      version: 1,
      writtenAt: new Date().toISOString(),
    },
    { timeoutMs: limits.timeoutMs ?? 1000 },
  );
  const toolCall = { type: "function" as const, id: "call-1", name: "probe", arguments: args };
  return executePreparedToolCall({ kind: "prepared", tool, toolCall, args }, undefined, () => {});
}

function errorText(outcome: SandboxOutcome): string {
  expect(outcome.kind).toBe("error");
  return outcome.kind === "error" ? outcome.message : "";
}

describe("a written tool in the sandbox", () => {
  it("computes from its args and returns content", async () => {
    const sum = await callWrittenTool("return String(args.a + args.b)", { a: 2, b: 3 });
    expect(sum).toEqual({
      result: { content: [{ type: "text", text: "5" }], details: {} },
      isError: false,
    });

    const shaped = await runInSandbox({
      code: `console.log("squaring", args.n);
        return { content: [{ type: "text", text: "n² = " + args.n * args.n }], details: { n: args.n } };`,
      args: { n: 7 },
    });
    expect(shaped).toEqual({
      kind: "ok",
      result: {
        content: [{ type: "text", text: "n² = 49" }],
        details: { n: 7, logs: ["squaring 7"] },
      },
    });
  });

  it("settles a returned promise and turns other JSON values into text", async () => {
    const awaited = await runInSandbox({ code: "return Promise.resolve({ total: 3 })" });
    expect(awaited).toEqual({
      kind: "ok",
      result: { content: [{ type: "text", text: '{"total":3}' }], details: {} },
    });
  });
});

describe("hostile written tools end as error results within their limits", () => {
  it('this.constructor.constructor("return process")() finds no process object', async () => {
    const outcome = await callWrittenTool(
      'return this.constructor.constructor("return process")()',
    );
    expect(outcome.isError).toBe(true);
    expect(firstText(outcome.result)).toBe(
      "written tool probe threw: ReferenceError: 'process' is not defined",
    );
  });

  it('require("fs") is not there', async () => {
    const outcome = await callWrittenTool(
      'return require("fs").readFileSync("/etc/passwd", "utf8")',
    );
    expect(outcome.isError).toBe(true);
    expect(firstText(outcome.result)).toContain("ReferenceError: 'require' is not defined");
  });

  it("process.env is not there, and neither are import() or Node's globals", async () => {
    const env = await callWrittenTool("return JSON.stringify(process.env)");
    expect(env.isError).toBe(true);
    expect(firstText(env.result)).toContain("'process' is not defined");
    const imported = await runInSandbox({ code: 'return import("os")' });
    expect(errorText(imported)).toMatch(/threw: .*could not load module 'os'/);
    const globals = await runInSandbox({
      code: `return ["process", "require", "module", "Buffer", "std", "os", "fetch", "setTimeout", "Deno", "Bun"]
        .map((name) => name + ":" + typeof globalThis[name]).join(" ")`,
    });
    expect(globals.kind === "ok" && firstText(globals.result)).toBe(
      "process:undefined require:undefined module:undefined Buffer:undefined std:undefined os:undefined fetch:undefined setTimeout:undefined Deno:undefined Bun:undefined",
    );
  });

  it("never sees a canary secret of the parent's environment, however it looks", async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    process.env.YIEM_CANARY = canary;
    try {
      const outcome = await runInSandbox({
        code: `const seen = [];
          const scan = (root) => { for (const key of Object.getOwnPropertyNames(root)) {
            let value; try { value = root[key]; } catch (e) { value = String(e); }
            try { seen.push(key + "=" + (typeof value === "object" ? JSON.stringify(value) : String(value))); } catch (e) { seen.push(key); }
          } };
          scan(globalThis);
          scan(this.constructor.constructor("return this")());
          for (const name of ["process", "env", "YIEM_CANARY", "scriptArgs", "std", "os"]) {
            try { seen.push(name + ":" + String(this.constructor.constructor("return " + name)())); } catch (e) { seen.push(String(e)); }
          }
          return seen.join("\\n");`,
      });
      expect(outcome.kind).toBe("ok");
      const text = outcome.kind === "ok" ? firstText(outcome.result) : "";
      expect(text).toContain("ReferenceError: 'process' is not defined");
      expect(text).not.toContain(canary);
    } finally {
      delete process.env.YIEM_CANARY;
    }
  });

  it("runs in a child with an empty environment under Node's permission model (Linux)", async () => {
    if (process.platform !== "linux") return;
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    process.env.YIEM_CANARY = canary;
    const controller = new AbortController();
    let pid = 0;
    try {
      const running = runInSandbox({
        code: "while (true) {}",
        timeoutMs: 10_000,
        signal: controller.signal,
        onStart: (started) => {
          pid = started;
        },
      });
      // Wait until the forked child has become the sandbox host (before exec it is a copy of us).
      for (let waited = 0; waited < 10_000; waited += 50) {
        const cmdline = pid ? readFileSync(`/proc/${pid}/cmdline`, "utf8") : "";
        if (cmdline.includes("sandboxHost.mjs")) break;
        await sleep(50);
      }
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      controller.abort();
      expect(errorText(await running)).toBe("sandboxed code was aborted");
      expect(environ).toBe("");
      expect(environ).not.toContain(canary);
      expect(cmdline.some((arg) => /^--(experimental-)?permission$/.test(arg))).toBe(true);
      expect(cmdline.some((arg) => arg.startsWith("--allow-fs-write"))).toBe(false);
    } finally {
      delete process.env.YIEM_CANARY;
    }
  });

  it("an endless loop times out within its limit, and the parent runs the next call fine", async () => {
    const started = Date.now();
    const looped = await callWrittenTool("while (true) {}", {}, { timeoutMs: 500 });
    expect(looped.isError).toBe(true);
    expect(firstText(looped.result)).toBe("written tool probe timed out after 500 ms");
    expect(Date.now() - started).toBeLessThan(5000);

    const stubborn = await runInSandbox({
      code: "while (true) { try { while (true) {} } catch (e) {} }",
      timeoutMs: 500,
      toolName: "stubborn",
    });
    expect(errorText(stubborn)).toBe("written tool stubborn timed out after 500 ms");

    const after = await callWrittenTool("return 'still here'");
    expect(after).toMatchObject({ isError: false, result: { content: [{ text: "still here" }] } });
  });

  it("huge allocations run out of memory (or fail) within their limit", async () => {
    const started = Date.now();
    const arrays = await callWrittenTool(
      "let a = []; while (true) a.push(new Array(1e6).fill(1));",
      {},
      { timeoutMs: 3000 },
    );
    expect(arrays.isError).toBe(true);
    expect(firstText(arrays.result)).toBe(
      "written tool probe ran out of memory (limit 33554432 bytes)",
    );
    const buffers = await runInSandbox({
      code: "const keep = []; while (true) keep.push(new Uint8Array(1 << 20));",
      memoryBytes: 20 * 1024 * 1024,
      toolName: "buffers",
    });
    expect(errorText(buffers)).toBe(
      "written tool buffers ran out of memory (limit 20971520 bytes)",
    );
    const doubling = await runInSandbox({
      code: 'let s = "x"; while (true) s += s;',
      toolName: "s",
    });
    expect(errorText(doubling)).toMatch(/^written tool s (ran out of memory|threw: InternalError)/);
    const flattened = await runInSandbox({
      code: 'let s = "x"; while (true) { s += s; s = s.slice(1) + "y"; }',
      toolName: "flat",
    });
    expect(errorText(flattened)).toBe("written tool flat ran out of memory (limit 33554432 bytes)");
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it("a child killed from outside ends as a clean error", async () => {
    const outcome = await runInSandbox({
      code: "while (true) {}",
      timeoutMs: 10_000,
      toolName: "victim",
      onStart: (pid) => {
        setTimeout(() => process.kill(pid, "SIGKILL"), 400);
      },
    });
    expect(errorText(outcome)).toBe("written tool victim stopped unexpectedly (signal SIGKILL)");
  });

  it("reports throws, non-JSON results, bad shapes and oversized results by name", async () => {
    const cases: Array<[string, string | RegExp]> = [
      ['throw new Error("boom")', "written tool t threw: Error: boom"],
      ["return undefined", "written tool t returned something that is not JSON (undefined)"],
      [
        "const o = {}; o.self = o; return o",
        /^written tool t returned something that is not JSON \(TypeError/,
      ],
      ["return 10n", /^written tool t returned something that is not JSON \(TypeError/],
      [
        "return { content: 'text' }",
        "written tool t returned an invalid result: its content is not an array",
      ],
      [
        "return new Promise(() => {})",
        "written tool t returned something that is not JSON (a promise that never settled)",
      ],
      [
        "function f() { return f() + 1 } return f()",
        /^written tool t (threw: InternalError: stack overflow|failed inside its sandbox)/,
      ],
    ];
    for (const [code, expected] of cases) {
      const message = errorText(await runInSandbox({ code, toolName: "t" }));
      if (typeof expected === "string") expect(message).toBe(expected);
      else expect(message).toMatch(expected);
    }
    const big = await runInSandbox({
      code: 'return "x".repeat(3000)',
      maxResultChars: 1000,
      toolName: "t",
    });
    expect(errorText(big)).toBe("written tool t returned a result of 3002 characters (limit 1000)");
  });

  it("checks that code compiles without running it, and rejects a body that closes its function", async () => {
    expect(await checkSandboxCode("return args.x * 2")).toBeUndefined();
    expect(await checkSandboxCode("while (true) {}")).toBeUndefined(); // compiled, never run
    expect(await checkSandboxCode("return (")).toMatch(/^SyntaxError/);
    expect(await checkSandboxCode("}); (function () {")).toBe(
      "SyntaxError: the code must be the body of one function: it closes it early",
    );
  });
});

describe("sandbox slots", () => {
  it("lets at most `limit` runs hold a slot at once and hands slots over in order", async () => {
    const slots = new SandboxSlots(2);
    const order: string[] = [];
    const first = await slots.acquire();
    const second = await slots.acquire();
    const third = slots.acquire().then((release) => {
      order.push("third");
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    first();
    first(); // releasing twice frees one slot only
    const releaseThird = await third;
    expect(order).toEqual(["third"]);
    second();
    releaseThird();
  });
});
