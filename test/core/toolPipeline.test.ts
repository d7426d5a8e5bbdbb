import {
  type AgentTool,
  type ExecutedOutcome,
  executePreparedToolCall,
  finalizeExecutedToolCall,
  localToolExecutor,
  type PreparedToolCall,
  prepareToolCall,
} from "@yiem/core";
import { describe, expect, it } from "vitest";
import {
  assistantWith,
  configFor,
  contextWith,
  firstText,
  makeCall,
  makeTool,
  recordEvents,
  sleep,
  textResult,
} from "../support/toolFixtures.js";

const citySchema = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};

async function prepare(
  tool: AgentTool,
  args: Record<string, unknown>,
  overrides = {},
  signal?: AbortSignal,
) {
  const context = contextWith([tool]);
  const call = makeCall("c1", tool.name, args);
  return prepareToolCall(
    context,
    assistantWith([call]),
    call,
    configFor(context, overrides),
    signal,
  );
}

function prepared(tool: AgentTool, args: Record<string, unknown> = {}): PreparedToolCall {
  return { kind: "prepared", tool, toolCall: makeCall("c1", tool.name, args), args };
}

describe("lifecycle §8.1 prepare phase: every failure becomes an immediate error outcome", () => {
  it("resolves the tool, prepares and validates arguments, and returns a prepared call", async () => {
    const tool = makeTool("getWeather", {
      inputSchema: citySchema,
      prepareArguments: (args) => ({ ...args, city: String(args.town ?? args.city) }),
    });
    const outcome = await prepare(tool, { town: "Tokyo" });
    expect(outcome.kind).toBe("prepared");
    expect(outcome.kind === "prepared" && outcome.args).toEqual({ town: "Tokyo", city: "Tokyo" });
  });

  it("reports an unknown tool with the tools that exist", async () => {
    const context = contextWith([makeTool("getTime")]);
    const call = makeCall("c1", "getWether");
    const outcome = await prepareToolCall(context, assistantWith([call]), call, configFor(context));
    expect(outcome.kind === "immediate" && outcome.isError).toBe(true);
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe(
      'Tool "getWether" not found. Available tools: getTime',
    );
  });

  it("refuses a call whose arguments were malformed, before touching the tool", async () => {
    let touched = false;
    const tool = makeTool("t", {
      prepareArguments: (a) => {
        touched = true;
        return a;
      },
    });
    const context = contextWith([tool]);
    const call = { ...makeCall("c1", "t"), argumentsError: "t: arguments are not valid JSON: x" };
    const outcome = await prepareToolCall(context, assistantWith([call]), call, configFor(context));
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe(
      "t: arguments are not valid JSON: x",
    );
    expect(touched).toBe(false);
  });

  it("turns a throwing or non-object prepareArguments into an error result", async () => {
    const throwing = await prepare(
      makeTool("t", {
        prepareArguments: () => {
          throw new Error("bad shape");
        },
      }),
      {},
    );
    expect(throwing.kind === "immediate" && firstText(throwing.result)).toBe(
      "t: prepareArguments failed: bad shape",
    );
    const wrong = await prepare(makeTool("t", { prepareArguments: () => "nope" as never }), {});
    expect(wrong.kind === "immediate" && firstText(wrong.result)).toBe(
      "t: prepareArguments did not return an object",
    );
  });

  it("fails validation with the field named, by JSON Schema by default", async () => {
    const outcome = await prepare(makeTool("getWeather", { inputSchema: citySchema }), {});
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe(
      'getWeather: invalid arguments: "city" is required',
    );
  });

  it("compares uniqueItems as JSON does: a key whose value is undefined is left out", async () => {
    const tool = makeTool("t", {
      inputSchema: {
        type: "object",
        properties: { records: { type: "array", uniqueItems: true, items: { type: "object" } } },
      },
      // A hook may leave optional keys undefined; as JSON the two records are the same.
      prepareArguments: () => ({ records: [{ id: 1, note: undefined }, { id: 1 }] }),
    });
    const outcome = await prepare(tool, {});
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe(
      't: invalid arguments: "records" must NOT have duplicate items (items ## 0 and 1 are identical)',
    );
  });

  it("uses the tool's own validateRequiredArgs instead of the schema when it has one", async () => {
    const tool = makeTool("t", {
      inputSchema: citySchema,
      validateRequiredArgs: (args) => (args.city === "Atlantis" ? "no such city" : undefined),
    });
    expect((await prepare(tool, {})).kind).toBe("prepared"); // the schema would have refused this
    const refused = await prepare(tool, { city: "Atlantis" });
    expect(refused.kind === "immediate" && firstText(refused.result)).toBe("t: no such city");
    const throwing = await prepare(
      makeTool("t", {
        validateRequiredArgs: () => {
          throw new Error("oops");
        },
      }),
      {},
    );
    expect(throwing.kind === "immediate" && firstText(throwing.result)).toBe(
      "t: argument validation failed: oops",
    );
  });

  it("lets beforeToolCall block with a reason, or with the default text", async () => {
    const withReason = await prepare(
      makeTool("t"),
      {},
      { beforeToolCall: () => ({ block: true, reason: "not allowed" }) },
    );
    expect(withReason.kind === "immediate" && firstText(withReason.result)).toBe("not allowed");
    const noReason = await prepare(
      makeTool("t"),
      {},
      { beforeToolCall: async () => ({ block: true }) },
    );
    expect(noReason.kind === "immediate" && firstText(noReason.result)).toBe(
      "Tool execution was blocked",
    );
    const allowed = await prepare(makeTool("t"), {}, { beforeToolCall: () => ({ block: false }) });
    expect(allowed.kind).toBe("prepared");
  });

  it("marks a call for approval: always for a tool that says so, once when beforeToolCall requires it", async () => {
    const always = await prepare(makeTool("deploy", { approval: "always" }), {});
    expect(always.kind === "prepared" && always.approval).toEqual({
      reason: "deploy always requires approval",
    });
    const once = await prepare(
      makeTool("t"),
      {},
      { beforeToolCall: () => ({ requireApproval: { reason: "over budget" } }) },
    );
    expect(once.kind === "prepared" && once.approval).toEqual({ reason: "over budget" });
    const plain = await prepare(makeTool("t"), {});
    expect(plain.kind === "prepared" && plain.approval).toBeUndefined();
  });

  it("never runs a call that needs approval without a cluster: it gets an error result", async () => {
    let ran = false;
    const execute = () => {
      ran = true;
      return textResult("deployed");
    };
    const tool = makeTool("deploy", { execute });
    const outcome = await localToolExecutor.execute(
      { ...prepared(tool), approval: { reason: "always" } },
      undefined,
      () => undefined,
    );
    expect(outcome.isError).toBe(true);
    expect(firstText(outcome.result)).toBe(
      "deploy: this call requires approval, which only a cluster can ask for",
    );
    expect(ran).toBe(false);
  });

  it("passes the prepared arguments and the assistant message to beforeToolCall", async () => {
    let seen: unknown;
    const tool = makeTool("t", { prepareArguments: () => ({ prepared: true }) });
    await prepare(
      tool,
      { raw: 1 },
      {
        beforeToolCall: (ctx: { args: unknown; assistantMessage: { role: string } }) => {
          seen = [ctx.args, ctx.assistantMessage.role];
          return undefined;
        },
      },
    );
    expect(seen).toEqual([{ prepared: true }, "assistant"]);
  });

  it("turns a throwing beforeToolCall into an error result", async () => {
    const outcome = await prepare(
      makeTool("t"),
      {},
      {
        beforeToolCall: () => {
          throw new Error("hook broke");
        },
      },
    );
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe(
      "t: beforeToolCall failed: hook broke",
    );
  });

  it("returns 'Operation aborted' when the signal fired during beforeToolCall", async () => {
    const controller = new AbortController();
    const hook = () => {
      controller.abort();
      return undefined;
    };
    const outcome = await prepare(makeTool("t"), {}, { beforeToolCall: hook }, controller.signal);
    expect(outcome.kind === "immediate" && firstText(outcome.result)).toBe("Operation aborted");
  });
});

describe("lifecycle §8.2 execute phase", () => {
  it("runs the tool with the prepared arguments and its call id", async () => {
    const tool = makeTool("echo", {
      execute: (id, args) => textResult(`${id}:${JSON.stringify(args)}`),
    });
    const outcome = await executePreparedToolCall(prepared(tool, { a: 1 }), undefined, () => {});
    expect(outcome).toEqual({
      result: { content: [{ type: "text", text: 'c1:{"a":1}' }], details: {} },
      isError: false,
    });
  });

  it("turns a throw, a rejection and an invalid result into error outcomes", async () => {
    const sync = await executePreparedToolCall(
      prepared(
        makeTool("t", {
          execute: () => {
            throw new Error("sync boom");
          },
        }),
      ),
      undefined,
      () => {},
    );
    const rejected = await executePreparedToolCall(
      prepared(
        makeTool("t", {
          execute: async () => {
            throw new Error("async boom");
          },
        }),
      ),
      undefined,
      () => {},
    );
    const invalid = await executePreparedToolCall(
      prepared(makeTool("t", { execute: () => ({ nope: 1 }) as never })),
      undefined,
      () => {},
    );
    expect([sync, rejected, invalid].map((o) => [o.isError, firstText(o.result)])).toEqual([
      [true, "sync boom"],
      [true, "async boom"],
      [true, "t returned a result without content"],
    ]);
  });

  it("emits partial results as updates until the call ends and drops later ones", async () => {
    let late: ((p: unknown) => void) | undefined;
    const tool = makeTool("slow", {
      execute: async (_id, _args, _signal, onPartialResult) => {
        onPartialResult({ step: 1 });
        await sleep(5);
        onPartialResult({ step: 2 });
        late = onPartialResult;
        return textResult("done");
      },
    });
    const { emit, events } = recordEvents();
    await executePreparedToolCall(prepared(tool), undefined, emit);
    late?.({ step: 3 });
    expect(events.map((e) => e.type === "toolExecUpdate" && e.partialResult)).toEqual([
      { step: 1 },
      { step: 2 },
    ]);
  });

  it("waits for slow async event sinks before returning", async () => {
    const delivered: unknown[] = [];
    const emit = async (event: { type: string }) => {
      await sleep(20);
      delivered.push(event.type);
    };
    const tool = makeTool("t", {
      execute: (_i, _a, _s, on) => {
        on("p");
        return textResult("ok");
      },
    });
    await executePreparedToolCall(prepared(tool), undefined, emit);
    expect(delivered).toEqual(["toolExecUpdate"]);
  });

  it("ends a call at once on abort, even when the tool ignores its signal", async () => {
    const controller = new AbortController();
    let sawSignal: AbortSignal | undefined;
    const tool = makeTool("stubborn", {
      execute: (_i, _a, signal) => {
        sawSignal = signal;
        return new Promise(() => {});
      },
    });
    setTimeout(() => controller.abort(), 10);
    const outcome = await executePreparedToolCall(prepared(tool), controller.signal, () => {});
    expect([outcome.isError, firstText(outcome.result)]).toEqual([true, "Operation aborted"]);
    expect(sawSignal?.aborted).toBe(true);
  });

  it("times a tool out after its timeoutMs and fires its signal", async () => {
    let sawSignal: AbortSignal | undefined;
    const tool = makeTool("slow", {
      timeoutMs: 20,
      execute: (_i, _a, signal) => {
        sawSignal = signal;
        return new Promise(() => {});
      },
    });
    const outcome = await executePreparedToolCall(prepared(tool), undefined, () => {});
    expect(firstText(outcome.result)).toBe("slow timed out after 20 ms");
    expect(sawSignal?.aborted).toBe(true);
  });

  it("never starts a tool when the signal already fired", async () => {
    let ran = false;
    const controller = new AbortController();
    controller.abort();
    const outcome = await executePreparedToolCall(
      prepared(
        makeTool("t", {
          execute: () => {
            ran = true;
            return textResult("x");
          },
        }),
      ),
      controller.signal,
      () => {},
    );
    expect([ran, firstText(outcome.result)]).toEqual([false, "Operation aborted"]);
  });
});

describe("lifecycle §8.3 finalize phase", () => {
  const executed: ExecutedOutcome = {
    result: textResult("secret=abc", { details: { n: 1 } }),
    isError: false,
  };
  const run = (afterToolCall: never) => {
    const tool = makeTool("t");
    const context = contextWith([tool]);
    const prep = prepared(tool);
    return finalizeExecutedToolCall(
      context,
      assistantWith([prep.toolCall]),
      prep,
      executed,
      configFor(context, { afterToolCall }),
    );
  };

  it("keeps the executed result when there is no hook or it returns nothing", async () => {
    const outcome = await run((() => undefined) as never);
    expect(outcome).toEqual({ toolCall: makeCall("c1", "t"), ...executed });
  });

  it("lets afterToolCall replace content, details, usage, terminate and isError", async () => {
    const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
    const outcome = await run((async () => ({
      content: [{ type: "text", text: "secret=***" }],
      details: { masked: true },
      usage,
      terminate: true,
      isError: true,
    })) as never);
    expect(outcome.result).toEqual({
      content: [{ type: "text", text: "secret=***" }],
      details: { masked: true },
      usage,
      terminate: true,
    });
    expect(outcome.isError).toBe(true);
  });

  it("replaces only the fields the hook returns", async () => {
    const outcome = await run((() => ({ terminate: true })) as never);
    expect(outcome.result).toEqual({ ...executed.result, terminate: true });
    expect(outcome.isError).toBe(false);
  });

  it("turns a throwing afterToolCall into an error result", async () => {
    const outcome = await run((() => {
      throw new Error("mask failed");
    }) as never);
    expect([outcome.isError, firstText(outcome.result)]).toEqual([
      true,
      "t: afterToolCall failed: mask failed",
    ]);
  });
});
