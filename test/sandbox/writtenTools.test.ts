import type { AgentTool, ToolArgs } from "@yiem/core";
import { executeToolCalls, LIST_TOOLS_NAME, listTool, registerTool, ToolStore } from "@yiem/core";
import {
  createWriteTool,
  createWrittenToolsSync,
  isWriteToolAllowed,
  loadWrittenTools,
  loadWrittenToolVersion,
  readWrittenToolsRev,
  saveWrittenTool,
  syncWrittenTools,
  WRITE_TOOL_DISABLED,
  type WrittenToolSpec,
  type WrittenToolsRedis,
  writtenToolHistory,
  writtenToolOf,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assistantWith,
  configFor,
  contextWith,
  firstText,
  makeCall,
  makeTool,
} from "../support/toolFixtures.js";

let server: TestRedis;
let redis: Redis;
let run = 0;

beforeAll(async () => {
  server = await startTestRedis();
  redis = new Redis(server.url);
});

afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

/** A fresh key prefix per test. */
function freshPrefix(): string {
  run += 1;
  return `${server.prefix}:${run}`;
}

const doubler: WrittenToolSpec = {
  name: "double",
  label: "Double",
  description: "Doubles a number",
  inputSchema: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
  code: "return String(args.x * 2)",
  parallel: true,
};

function writeArgs(spec: WrittenToolSpec): ToolArgs {
  const { code, ...rest } = spec;
  return { ...rest, executeCode: code };
}

function call(tool: AgentTool | undefined, args: ToolArgs) {
  if (!tool) throw new Error("tool missing");
  return tool.execute("call-1", args, undefined, () => {});
}

/**
 * A connection of its own that counts the Yiem scripts run through it (a full read of the
 * written tools is one); everything else passes through untouched.
 */
function countingRedis(): WrittenToolsRedis & { scripts: number } {
  const connection = redis.duplicate();
  let scripts = 0;
  return new Proxy(connection, {
    get(target, property) {
      if (property === "scripts") return scripts;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (typeof property === "string" && /^yiem[A-Z]/.test(property)) {
        return (...args: unknown[]) => {
          scripts += 1;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  }) as unknown as WrittenToolsRedis & { scripts: number };
}

describe("written tools in Redis", () => {
  it("same content keeps its hash and version; changed content becomes version 2 with history", async () => {
    const prefix = freshPrefix();
    const first = await saveWrittenTool(redis, prefix, doubler);
    expect(first.changed).toBe(true);
    expect(first.definition).toMatchObject({ ...doubler, version: 1 });
    expect(first.definition.hash).toMatch(/^[0-9a-f]{64}$/);

    const reordered = { ...doubler, inputSchema: { required: ["x"], ...doubler.inputSchema } };
    const again = await saveWrittenTool(redis, prefix, reordered);
    expect(again).toEqual({ definition: first.definition, changed: false });
    expect(await readWrittenToolsRev(redis, prefix)).toBe(1);

    const second = await saveWrittenTool(redis, prefix, {
      ...doubler,
      code: "return args.x + args.x",
    });
    expect(second.changed).toBe(true);
    expect(second.definition.version).toBe(2);
    expect(second.definition.hash).not.toBe(first.definition.hash);
    expect(await writtenToolHistory(redis, prefix, "double")).toEqual([
      first.definition.hash,
      second.definition.hash,
    ]);
    expect((await loadWrittenToolVersion(redis, prefix, first.definition.hash))?.code).toBe(
      doubler.code,
    );
    const snapshot = await loadWrittenTools(redis, prefix);
    expect(snapshot.rev).toBe(2);
    expect(snapshot.definitions).toEqual([second.definition]);
  });

  it("refuses to store an invalid definition", async () => {
    const prefix = freshPrefix();
    await expect(saveWrittenTool(redis, prefix, { ...doubler, name: "bad name" })).rejects.toThrow(
      /name must be an identifier/,
    );
    expect(await readWrittenToolsRev(redis, prefix)).toBe(0);
  });

  it("a tool written through one store appears in a second store (a worker) without a restart, re-read only when the revision changed", async () => {
    const prefix = freshPrefix();
    const coordinator = new ToolStore({ name: "coordinator" });
    const writeTool = createWriteTool({ redis, prefix, store: coordinator, allowed: true });
    registerTool(coordinator, writeTool);
    const worker = new ToolStore({ name: "worker" });
    const workerRedis = countingRedis();

    const empty = await syncWrittenTools(workerRedis, prefix, worker);
    expect(empty).toEqual({ rev: 0, added: [], conflicts: [] });

    await call(writeTool, writeArgs(doubler));
    const synced = await syncWrittenTools(workerRedis, prefix, worker, empty.rev);
    expect(synced).toEqual({ rev: 1, added: ["double"], conflicts: [] });
    expect(firstText(await call(worker.tools.get("double"), { x: 21 }))).toBe("42");
    expect(worker.tools.get("double")?.parallelToolExecute).toBe(true);

    const readsBefore = workerRedis.scripts;
    const unchanged = await syncWrittenTools(workerRedis, prefix, worker, synced.rev);
    expect(unchanged).toEqual({ rev: 1, added: [], conflicts: [] });
    expect(workerRedis.scripts).toBe(readsBefore); // one GET, no full read

    await call(writeTool, writeArgs({ ...doubler, code: "return 'twice ' + args.x * 2" }));
    const updated = await syncWrittenTools(workerRedis, prefix, worker, unchanged.rev);
    expect(updated).toEqual({ rev: 2, added: ["double"], conflicts: [] });
    expect(workerRedis.scripts).toBe(readsBefore + 1);
    expect(firstText(await call(worker.tools.get("double"), { x: 4 }))).toBe("twice 8");
    expect(writtenToolOf(worker.tools.get("double") as AgentTool)?.version).toBe(2);
    workerRedis.disconnect();
  });

  it("a worker's own built-in tool is never replaced by a written tool of the same name", async () => {
    const prefix = freshPrefix();
    await saveWrittenTool(redis, prefix, doubler);
    const worker = new ToolStore({ name: "worker" });
    const builtin = makeTool("double");
    registerTool(worker, builtin);
    const sync = createWrittenToolsSync({ redis, prefix, store: worker });
    const [a, b] = await Promise.all([sync.sync(), sync.sync()]);
    expect(a).toBe(b); // concurrent callers share one read
    expect(a).toEqual({ rev: 1, added: [], conflicts: ["double"] });
    expect(worker.tools.get("double")).toBe(builtin);
    expect(sync.rev()).toBe(1);
  });
});

describe("writeTool", () => {
  it("is disabled unless YIEM_ALLOW_WRITE_TOOL=1", async () => {
    const prefix = freshPrefix();
    expect(isWriteToolAllowed({})).toBe(false);
    expect(isWriteToolAllowed({ YIEM_ALLOW_WRITE_TOOL: "true" })).toBe(false);
    expect(isWriteToolAllowed({ YIEM_ALLOW_WRITE_TOOL: "1" })).toBe(true);
    const store = new ToolStore({ name: "agent" });
    const writeTool = createWriteTool({ redis, prefix, store, allowed: isWriteToolAllowed({}) });
    registerTool(store, writeTool);
    const context = contextWith([writeTool]);
    const batch = await executeToolCalls(
      context,
      assistantWith([makeCall("c1", "writeTool", writeArgs(doubler))]),
      [makeCall("c1", "writeTool", writeArgs(doubler))],
      configFor(context),
      undefined,
      () => {},
    );
    expect(batch.messages[0]).toMatchObject({
      isError: true,
      content: [{ type: "text", text: WRITE_TOOL_DISABLED }],
    });
    expect(WRITE_TOOL_DISABLED).toBe("writeTool is disabled: set YIEM_ALLOW_WRITE_TOOL=1");
    expect(store.tools.has("double")).toBe(false);
    expect(await readWrittenToolsRev(redis, prefix)).toBe(0);
  });

  it("refuses to overwrite a built-in tool, or itself, or listTools", async () => {
    const prefix = freshPrefix();
    const store = new ToolStore({ name: "agent" });
    const getTime = makeTool("getTime");
    registerTool(store, getTime);
    const writeTool = createWriteTool({ redis, prefix, store, allowed: true });
    for (const name of ["getTime", "writeTool", LIST_TOOLS_NAME]) {
      await expect(call(writeTool, writeArgs({ ...doubler, name }))).rejects.toThrow(
        `writeTool refused "${name}": "${name}" is a built-in tool and cannot be replaced; choose another name`,
      );
    }
    expect(store.tools.get("getTime")).toBe(getTime);
    expect(await readWrittenToolsRev(redis, prefix)).toBe(0);
  });

  it("refuses code that does not compile and input schemas that do not compile", async () => {
    const prefix = freshPrefix();
    const store = new ToolStore({ name: "agent" });
    const writeTool = createWriteTool({ redis, prefix, store, allowed: true });
    await expect(call(writeTool, writeArgs({ ...doubler, code: "return (" }))).rejects.toThrow(
      /^writeTool refused "double": executeCode does not compile: SyntaxError/,
    );
    await expect(
      call(writeTool, writeArgs({ ...doubler, code: "}); (function () {" })),
    ).rejects.toThrow(/closes it early/);
    await expect(
      call(writeTool, writeArgs({ ...doubler, inputSchema: { type: "string" } })),
    ).rejects.toThrow(/inputSchema must be a JSON Schema object with type "object"/);
    await expect(
      call(
        writeTool,
        writeArgs({ ...doubler, inputSchema: { type: "object", minProperties: "x" } }),
      ),
    ).rejects.toThrow(/the tool's input schema is invalid/);
    expect(store.tools.size).toBe(0);
    expect(await readWrittenToolsRev(redis, prefix)).toBe(0);
  });

  it("answers with addedToolNames, and listTools shows the written tool afterwards", async () => {
    const prefix = freshPrefix();
    const store = new ToolStore({ name: "agent" });
    const lister = listTool(store);
    registerTool(store, lister);
    const writeTool = createWriteTool({ redis, prefix, store, allowed: true });
    registerTool(store, writeTool);
    const calls = [makeCall("c1", "writeTool", writeArgs(doubler))];
    const batch = await executeToolCalls(
      contextWith([...store.tools.values()]),
      assistantWith(calls),
      calls,
      configFor(contextWith([...store.tools.values()])),
      undefined,
      () => {},
    );
    const message = batch.messages[0];
    expect(message?.isError).toBe(false);
    expect(message?.addedToolNames).toEqual(["double"]);
    expect(firstText(message ?? { content: [] })).toMatch(
      /^Tool "double" saved as version 1 \(hash [0-9a-f]{8}…\)$/,
    );
    const listed = firstText(await call(lister, {}));
    expect(listed).toContain("- double: Double — Doubles a number");

    const repeated = await call(writeTool, writeArgs(doubler));
    expect(repeated.addedToolNames).toEqual(["double"]);
    expect(firstText(repeated)).toMatch(/^Tool "double" unchanged: version 1 /);
    expect(firstText(await call(store.tools.get("double"), { x: 5 }))).toBe("10");
  });

  it("can be gated by a beforeToolCall approval", async () => {
    const prefix = freshPrefix();
    const store = new ToolStore({ name: "agent" });
    registerTool(store, createWriteTool({ redis, prefix, store, allowed: true }));
    const context = contextWith([...store.tools.values()]);
    const calls = [makeCall("c1", "writeTool", writeArgs(doubler))];
    const batch = await executeToolCalls(
      context,
      assistantWith(calls),
      calls,
      configFor(context, {
        beforeToolCall: ({ toolCall }) =>
          toolCall.name === "writeTool"
            ? { block: true, reason: "needs a human's approval" }
            : undefined,
      }),
      undefined,
      () => {},
    );
    expect(batch.messages[0]).toMatchObject({ isError: true });
    expect(firstText(batch.messages[0] ?? { content: [] })).toContain("needs a human's approval");
    expect(store.tools.has("double")).toBe(false);
    expect(await readWrittenToolsRev(redis, prefix)).toBe(0);
  });
});
