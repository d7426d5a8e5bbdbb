import {
  type AgentTool,
  executeToolCalls,
  executeToolCallsSequential,
  localToolExecutor,
  shouldTerminate,
  type ToolExecutor,
} from "@yiem/core";
import { batchMode } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import {
  assistantWith,
  configFor,
  contextWith,
  deferred,
  firstText,
  makeCall,
  makeTool,
  recordEvents,
  sleep,
  textResult,
} from "../support/toolFixtures.js";

function runBatch(
  tools: AgentTool[],
  calls = tools.map((t, i) => makeCall(`c${i}`, t.name)),
  overrides = {},
  signal?: AbortSignal,
) {
  const context = contextWith(tools);
  const recorder = recordEvents();
  const batch = executeToolCalls(
    context,
    assistantWith(calls),
    calls,
    configFor(context, overrides),
    signal,
    recorder.emit,
  );
  return { batch, recorder };
}

/** A parallel tool that counts how many calls run at once. */
function concurrencyProbe() {
  let running = 0;
  const probe = { max: 0 };
  const tool = (name: string, parallel = true) =>
    makeTool(name, {
      parallelToolExecute: parallel,
      execute: async () => {
        running++;
        probe.max = Math.max(probe.max, running);
        await sleep(15);
        running--;
        return textResult(name);
      },
    });
  return { probe, tool };
}

describe("lifecycle §9 parallel batches", () => {
  it("runs two parallel tools that each wait for the other to start (a sequential runner would deadlock)", async () => {
    const aStarted = deferred();
    const bStarted = deferred();
    const a = makeTool("a", {
      parallelToolExecute: true,
      execute: async () => {
        aStarted.resolve();
        await bStarted.promise;
        return textResult("a done");
      },
    });
    const b = makeTool("b", {
      parallelToolExecute: true,
      execute: async () => {
        bStarted.resolve();
        await aStarted.promise;
        return textResult("b done");
      },
    });
    const { batch } = runBatch([a, b]);
    const result = await Promise.race([batch, sleep(2000).then(() => "deadlock" as const)]);
    expect(result).not.toBe("deadlock");
    expect(result !== "deadlock" && result.messages.map((m) => firstText(m))).toEqual([
      "a done",
      "b done",
    ]);
  });

  it("returns results in call order when completion order is reversed", async () => {
    const finished: string[] = [];
    // Each call finishes only after the next one has (and its end event is out: a macrotask
    // later): t3 first, t0 last, whatever the machine's load.
    const done = [0, 1, 2, 3].map(() => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      return { promise, resolve };
    });
    const tools = [0, 1, 2, 3].map((i) =>
      makeTool(`t${i}`, {
        parallelToolExecute: true,
        execute: async () => {
          if (i < 3) await done[i + 1]?.promise;
          finished.push(`t${i}`);
          setImmediate(() => done[i]?.resolve());
          return textResult(`t${i}`);
        },
      }),
    );
    const { batch, recorder } = runBatch(tools);
    const { messages } = await batch;
    expect(finished).toEqual(["t3", "t2", "t1", "t0"]);
    expect(messages.map((m) => [m.toolCallId, m.toolName, firstText(m)])).toEqual([
      ["c0", "t0", "t0"],
      ["c1", "t1", "t1"],
      ["c2", "t2", "t2"],
      ["c3", "t3", "t3"],
    ]);
    const ends = recorder.events
      .filter((e) => e.type === "toolExecEnd")
      .map((e) => e.type === "toolExecEnd" && e.toolCallId);
    expect(ends).toEqual(["c3", "c2", "c1", "c0"]);
  });

  it("forces the whole batch sequential when one tool is not parallel", async () => {
    const { probe, tool } = concurrencyProbe();
    const tools = [tool("p1"), tool("p2"), tool("seq", false)];
    expect(
      batchMode(
        contextWith(tools),
        tools.map((t, i) => makeCall(`c${i}`, t.name)),
        configFor(contextWith(tools)),
      ),
    ).toBe("sequential");
    await runBatch(tools).batch;
    expect(probe.max).toBe(1);
  });

  it("runs all-parallel tools concurrently, and sequentially when the configuration says so", async () => {
    const parallel = concurrencyProbe();
    await runBatch([parallel.tool("p1"), parallel.tool("p2"), parallel.tool("p3")]).batch;
    expect(parallel.probe.max).toBe(3);
    const configured = concurrencyProbe();
    await runBatch([configured.tool("p1"), configured.tool("p2")], undefined, {
      toolExecution: "sequential",
    }).batch;
    expect(configured.probe.max).toBe(1);
  });

  it("lets unknown tools not force sequential, and gives them error results in place", async () => {
    const { probe, tool } = concurrencyProbe();
    const calls = [makeCall("c0", "p1"), makeCall("c1", "ghost"), makeCall("c2", "p2")];
    const { messages } = await runBatch([tool("p1"), tool("p2")], calls).batch;
    expect(probe.max).toBe(2);
    expect(messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["c0", false],
      ["c1", true],
      ["c2", false],
    ]);
  });

  it("sends every prepared call through the configured executor (the cluster seam)", async () => {
    const seen: Array<[string, string | undefined]> = [];
    const executor: ToolExecutor = {
      execute: (prep, signal, emit, ctx) => {
        seen.push([prep.toolCall.id, ctx?.mode]);
        return localToolExecutor.execute(prep, signal, emit);
      },
    };
    const tools = [
      makeTool("p1", { parallelToolExecute: true }),
      makeTool("p2", { parallelToolExecute: true }),
    ];
    const calls = [makeCall("c0", "p1"), makeCall("c1", "ghost"), makeCall("c2", "p2")];
    await runBatch(tools, calls, { executor }).batch;
    expect(seen).toEqual([
      ["c0", "parallel"],
      ["c2", "parallel"],
    ]);
  });

  it("turns an executor that throws into an error result", async () => {
    const executor: ToolExecutor = { execute: () => Promise.reject(new Error("queue down")) };
    const { messages } = await runBatch([makeTool("p", { parallelToolExecute: true })], undefined, {
      executor,
    }).batch;
    expect([messages[0]?.isError, firstText(messages[0] ?? { content: [] })]).toEqual([
      true,
      "p: queue down",
    ]);
  });
});

describe("lifecycle §9 abort", () => {
  it("skips the calls left in a sequential batch with 'Operation aborted' results", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const tools = ["a", "b", "c"].map((name) =>
      makeTool(name, {
        execute: () => {
          ran.push(name);
          if (name === "a") controller.abort();
          return textResult(name);
        },
      }),
    );
    const context = contextWith(tools);
    const calls = tools.map((t, i) => makeCall(`c${i}`, t.name));
    const recorder = recordEvents();
    const batch = await executeToolCallsSequential(
      context,
      assistantWith(calls),
      calls,
      configFor(context),
      controller.signal,
      recorder.emit,
    );
    expect(ran).toEqual(["a"]);
    expect(batch.messages.map((m) => [m.toolCallId, firstText(m), m.isError])).toEqual([
      ["c0", "a", false],
      ["c1", "Operation aborted", true],
      ["c2", "Operation aborted", true],
    ]);
    expect(recorder.forCall("c2")).toEqual(["toolExecStart", "toolExecEnd"]);
  });

  it("ends running parallel calls on abort, each with one result", async () => {
    const controller = new AbortController();
    const tools = ["a", "b"].map((name) =>
      makeTool(name, { parallelToolExecute: true, execute: () => new Promise(() => {}) }),
    );
    const { batch } = runBatch(tools, undefined, {}, controller.signal);
    setTimeout(() => controller.abort(), 10);
    const { messages } = await batch;
    expect(messages.map((m) => [m.toolCallId, firstText(m)])).toEqual([
      ["c0", "Operation aborted"],
      ["c1", "Operation aborted"],
    ]);
  });
});

describe("lifecycle §13 events", () => {
  it("emits start, then the call's updates in order, then end, for every call", async () => {
    const tool = (name: string) =>
      makeTool(name, {
        parallelToolExecute: true,
        execute: async (_id, _args, _signal, onPartial) => {
          for (const step of [1, 2, 3]) {
            onPartial(`${name}-${step}`);
            await sleep(2);
          }
          return textResult(name);
        },
      });
    const { batch, recorder } = runBatch([
      tool("a"),
      tool("b"),
      makeTool("c", {
        parallelToolExecute: true,
        execute: () => {
          throw new Error("x");
        },
      }),
    ]);
    await batch;
    expect(recorder.forCall("c0")).toEqual([
      "toolExecStart",
      "toolExecUpdate",
      "toolExecUpdate",
      "toolExecUpdate",
      "toolExecEnd",
    ]);
    expect(recorder.forCall("c2")).toEqual(["toolExecStart", "toolExecEnd"]);
    const updates = recorder.events.filter(
      (e) => e.type === "toolExecUpdate" && e.toolCallId === "c1",
    );
    expect(updates.map((e) => e.type === "toolExecUpdate" && e.partialResult)).toEqual([
      "b-1",
      "b-2",
      "b-3",
    ]);
    const end = recorder.events.find((e) => e.type === "toolExecEnd" && e.toolCallId === "c2");
    expect(end).toMatchObject({
      toolName: "c",
      isError: true,
      result: { content: [{ type: "text", text: "x" }] },
    });
  });

  it("carries the call's arguments on start and update events", async () => {
    const tool = makeTool("t", {
      execute: (_i, _a, _s, on) => {
        on(1);
        return textResult("ok");
      },
    });
    const { batch, recorder } = runBatch([tool], [makeCall("c0", "t", { city: "Oslo" })]);
    await batch;
    const [start, update] = recorder.events;
    expect(start).toEqual({
      type: "toolExecStart",
      toolCallId: "c0",
      toolName: "t",
      arguments: { city: "Oslo" },
    });
    expect(update).toMatchObject({
      type: "toolExecUpdate",
      arguments: { city: "Oslo" },
      partialResult: 1,
    });
  });

  it("ignores an event sink that throws", async () => {
    const context = contextWith([makeTool("t")]);
    const calls = [makeCall("c0", "t")];
    const batch = await executeToolCalls(
      context,
      assistantWith(calls),
      calls,
      configFor(context),
      undefined,
      () => {
        throw new Error("sink broke");
      },
    );
    expect(firstText(batch.messages[0] ?? { content: [] })).toBe("t ran");
  });
});

describe("lifecycle §10 and §11 batches, termination and result messages", () => {
  const terminating = (name: string, terminate: boolean) =>
    makeTool(name, { execute: () => textResult(name, { terminate }) });

  it("terminates only when every result asks to", async () => {
    expect((await runBatch([terminating("a", true), terminating("b", true)]).batch).terminate).toBe(
      true,
    );
    expect(
      (await runBatch([terminating("a", true), terminating("b", false)]).batch).terminate,
    ).toBe(false);
    expect(shouldTerminate([])).toBe(false);
  });

  it("builds one toolResult message per call with id, name, content, details, usage and addedToolNames", async () => {
    const usage = { inputTokens: 5, outputTokens: 6, totalTokens: 11 };
    const tool = makeTool("maker", {
      execute: () => ({
        content: [{ type: "text", text: "made" }],
        details: { k: 1 },
        usage,
        addedToolNames: ["newTool"],
      }),
    });
    const { messages } = await runBatch([tool]).batch;
    expect(messages).toEqual([
      {
        role: "toolResult",
        toolCallId: "c0",
        toolName: "maker",
        content: [{ type: "text", text: "made" }],
        details: { k: 1 },
        usage,
        addedToolNames: ["newTool"],
        isError: false,
        timestamp: expect.any(Number),
      },
    ]);
  });
});

describe("a run's signal over many calls", () => {
  it("leaves no abort listener behind per call (no listener leak warning over 30 calls)", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const controller = new AbortController();
    const tool = makeTool("quick", { parallelToolExecute: true });
    const calls = Array.from({ length: 30 }, (_, i) => makeCall(`c${i}`, "quick"));
    for (const mode of ["parallel", "sequential"] as const) {
      await runBatch([tool], calls, { toolExecution: mode }, controller.signal).batch;
    }
    await sleep(20);
    process.off("warning", onWarning);
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("keeps one abort listener on the run's signal while 30 parallel calls wait at once", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const controller = new AbortController();
    const tool = makeTool("slow", {
      parallelToolExecute: true,
      execute: async () => {
        await sleep(30);
        return { content: [{ type: "text", text: "done" }], details: {} };
      },
    });
    const calls = Array.from({ length: 30 }, (_, i) => makeCall(`w${i}`, "slow"));
    const { messages } = await runBatch(
      [tool],
      calls,
      { toolExecution: "parallel" },
      controller.signal,
    ).batch;
    await sleep(20);
    process.off("warning", onWarning);
    expect(messages).toHaveLength(30);
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});
