import {
  type AgentEvent,
  executeToolCalls,
  type McpToolSource,
  readMcpConfig,
  startMcpToolSource,
  ToolStore,
} from "@yiem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  childPidsOf,
  everythingStdio,
  fixtureStdio,
  startEverythingHttp,
  waitFor,
  writeMcpConfig,
} from "../support/mcp/mcpServers.js";
import {
  assistantWith,
  configFor,
  contextWith,
  makeCall,
  recordEvents,
} from "../support/toolFixtures.js";

/** Runs one call through the lifecycle (prepare → execute → finalize) with the store's tools. */
async function runCall(
  store: ToolStore,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
) {
  const context = contextWith([...store.tools.values()]);
  const call = makeCall("c1", name, args);
  const recorder = recordEvents();
  const batch = await executeToolCalls(
    context,
    assistantWith([call]),
    [call],
    configFor(context),
    signal,
    recorder.emit,
  );
  const message = batch.messages[0];
  if (!message) throw new Error("no result");
  return { message, events: recorder.events };
}

function textOf(message: { content: ReadonlyArray<{ type: string; text?: string }> }): string {
  return message.content.map((block) => block.text ?? `<${block.type}>`).join("\n");
}

function updates(events: AgentEvent[]): unknown[] {
  return events.flatMap((event) => (event.type === "toolExecUpdate" ? [event.partialResult] : []));
}

async function startSource(servers: Record<string, unknown>) {
  const store = new ToolStore({ name: "mcp-test" });
  const source = await startMcpToolSource({
    config: readMcpConfig(writeMcpConfig(servers)),
    toolStore: store,
  });
  return { store, source };
}

describe("MCP tools from the reference server over stdio", () => {
  let store: ToolStore;
  let source: McpToolSource;
  beforeAll(async () => {
    ({ store, source } = await startSource({
      everything: everythingStdio({ tools: { "get-sum": { timeoutMs: 5000, idempotent: true } } }),
      bare: everythingStdio({ toolPrefix: "", allowTools: ["echo"] }),
    }));
  });
  afterAll(() => source.close());

  it("registers each tool as <server>__<tool> with the server's schema, parallel, with the config's options", () => {
    const echo = store.tools.get("everything__echo");
    expect(echo?.parallelToolExecute).toBe(true);
    expect(echo?.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    expect(store.tools.get("everything__get-sum")).toMatchObject({
      timeoutMs: 5000,
      idempotent: true,
    });
    expect(store.tools.has("everything__simulate-research-query")).toBe(false); // task-only
    const bare = source.servers().find((server) => server.name === "bare");
    expect(bare).toEqual({ name: "bare", state: "up", tools: ["echo"] });
  });

  it("calls a tool with its arguments and returns its text", async () => {
    const { message } = await runCall(store, "everything__echo", { message: "hi" });
    expect(message.isError).toBe(false);
    expect(textOf(message)).toBe("Echo: hi");
    expect(message.details).toMatchObject({ mcp: { server: "everything", tool: "echo" } });
  });

  it("turns progress notifications into toolExecUpdate events", async () => {
    const { message, events } = await runCall(store, "everything__trigger-long-running-operation", {
      duration: 0.3,
      steps: 3,
    });
    expect(textOf(message)).toContain("Long running operation completed");
    // The last notification may come after the result, when the call no longer takes updates.
    const seen = updates(events);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.slice(0, 2)).toEqual(
      [1, 2].map((progress) => expect.objectContaining({ progress, total: 3 })),
    );
  });

  it("keeps image content and describes resource links and embedded resources as text", async () => {
    const image = await runCall(store, "everything__get-tiny-image", {});
    expect(image.message.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    const links = await runCall(store, "everything__get-resource-links", { count: 1 });
    expect(textOf(links.message)).toMatch(/\[resource link: .+ demo:\/\/resource\//);
    const embedded = await runCall(store, "everything__get-resource-reference", {});
    expect(textOf(embedded.message)).toMatch(
      /\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1/,
    );
  });

  it("puts structuredContent into details", async () => {
    const { message } = await runCall(store, "everything__get-structured-content", {
      location: "Chicago",
    });
    expect(message.details.structuredContent).toEqual({
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
  });

  it("refuses arguments that break the server's schema before calling it", async () => {
    const { message } = await runCall(store, "everything__echo", { message: 3 });
    expect(message.isError).toBe(true);
    expect(textOf(message)).toContain("message");
  });
});

describe("MCP server failures", () => {
  it("makes an isError result an error result, and cancels an aborted call on the server", async () => {
    const { store, source } = await startSource({ fixture: fixtureStdio() });
    try {
      const failed = await runCall(store, "fixture__fail", {});
      expect(failed.message.isError).toBe(true);
      expect(textOf(failed.message)).toBe("the disk is full");
      const controller = new AbortController();
      const waiting = runCall(store, "fixture__wait", {}, controller.signal);
      setTimeout(() => controller.abort(), 200);
      const aborted = await waiting;
      expect(aborted.message.isError).toBe(true);
      expect(textOf(aborted.message)).toMatch(/abort/i);
      const count = await runCall(store, "fixture__cancelled", {});
      expect(textOf(count.message)).toBe("1");
    } finally {
      await source.close();
    }
  });

  it("follows notifications/tools/list_changed: a tool added and removed on the server comes and goes in the store", async () => {
    const { store, source } = await startSource({ fixture: fixtureStdio() });
    try {
      expect(store.tools.has("fixture__greet")).toBe(false);
      await runCall(store, "fixture__add-tool", {});
      await waitFor("greet in the store", () => store.tools.has("fixture__greet"));
      const greeted = await runCall(store, "fixture__greet", { name: "Ana" });
      expect(textOf(greeted.message)).toBe("Hello, Ana");
      await runCall(store, "fixture__remove-tool", {});
      await waitFor("greet gone", () => !store.tools.has("fixture__greet"));
      expect(store.tools.has("fixture__fail")).toBe(true);
    } finally {
      await source.close();
    }
  });

  it("turns a call whose server is killed into an error naming server and tool, restarts it, and brings its tools back", async () => {
    const { store, source } = await startSource({ everything: everythingStdio() });
    try {
      const [pid] = childPidsOf(process.pid, "server-everything");
      expect(pid).toBeDefined();
      const context = contextWith([...store.tools.values()]);
      const call = makeCall("c1", "everything__trigger-long-running-operation", {
        duration: 5,
        steps: 50,
      });
      let killed = false;
      const batch = executeToolCalls(
        context,
        assistantWith([call]),
        [call],
        configFor(context),
        undefined,
        (event) => {
          if (event.type === "toolExecUpdate" && !killed) {
            killed = true;
            process.kill(pid as number, "SIGKILL");
          }
        },
      );
      const [message] = (await batch).messages;
      expect(message?.isError).toBe(true);
      expect(textOf(message as never)).toBe(
        'everything__trigger-long-running-operation: MCP server "everything" exited while running tool "trigger-long-running-operation"; the call has no result',
      );
      await waitFor("the tools back", () => store.tools.has("everything__echo"));
      expect(childPidsOf(process.pid, "server-everything")).not.toContain(pid);
      const again = await runCall(store, "everything__echo", { message: "back" });
      expect(textOf(again.message)).toBe("Echo: back");
    } finally {
      await source.close();
    }
  });

  it("runs a call again once its killed server is back when the tool's retries allow", async () => {
    const { store, source } = await startSource({ everything: everythingStdio({ retries: 1 }) });
    try {
      const context = contextWith([...store.tools.values()]);
      const call = makeCall("c1", "everything__trigger-long-running-operation", {
        duration: 0.5,
        steps: 5,
      });
      let killed = false;
      const batch = executeToolCalls(
        context,
        assistantWith([call]),
        [call],
        configFor(context),
        undefined,
        (event) => {
          if (event.type === "toolExecUpdate" && !killed) {
            killed = true;
            for (const pid of childPidsOf(process.pid, "server-everything"))
              process.kill(pid, "SIGKILL");
          }
        },
      );
      const [message] = (await batch).messages;
      expect(killed).toBe(true);
      expect(message?.isError).toBe(false);
      expect(textOf(message as never)).toContain("Long running operation completed");
    } finally {
      await source.close();
    }
  });

  it("fails a call of a stdio server that hangs without exiting, replaces the server and leaves no process of the old one", async () => {
    const { store, source } = await startSource({
      everything: everythingStdio({ pingIntervalMs: 100, pingTimeoutMs: 500 }),
    });
    try {
      const [pid] = childPidsOf(process.pid, "server-everything");
      expect(pid).toBeDefined();
      const call = runCall(store, "everything__trigger-long-running-operation", {
        duration: 30,
        steps: 30,
      });
      process.kill(pid as number, "SIGSTOP"); // alive, answering nothing
      const { message } = await call;
      expect(message.isError).toBe(true);
      expect(textOf(message)).toMatch(/MCP server "everything" stopped answering/);
      await waitFor(
        "a new server with its tools",
        () =>
          store.tools.has("everything__echo") &&
          childPidsOf(process.pid, "server-everything").some((p) => p !== pid),
        15_000,
      );
      await waitFor(
        "the hung server gone",
        () => !childPidsOf(process.pid, "server-everything").includes(pid as number),
        15_000,
      );
      const again = await runCall(store, "everything__echo", { message: "replaced" });
      expect(textOf(again.message)).toBe("Echo: replaced");
    } finally {
      for (const p of childPidsOf(process.pid, "server-everything")) process.kill(p, "SIGCONT");
      await source.close();
    }
  });

  it("closes its stdio servers' processes on close", async () => {
    const { source } = await startSource({ everything: everythingStdio() });
    expect(childPidsOf(process.pid, "server-everything")).toHaveLength(1);
    await source.close();
    await waitFor(
      "no server process",
      () => childPidsOf(process.pid, "server-everything").length === 0,
    );
  });
});

describe("MCP tools from the reference server over Streamable HTTP", () => {
  it("lists and calls tools with progress, drops them while the server is gone and brings them back when it answers again", async () => {
    const first = await startEverythingHttp();
    const { store, source } = await startSource({
      web: { url: first.url, pingIntervalMs: 100, pingTimeoutMs: 500 },
    });
    try {
      const echo = await runCall(store, "web__echo", { message: "over http" });
      expect(textOf(echo.message)).toBe("Echo: over http");
      const { events } = await runCall(store, "web__trigger-long-running-operation", {
        duration: 0.2,
        steps: 2,
      });
      expect(updates(events).length).toBeGreaterThanOrEqual(1);
      first.server.signal("SIGKILL");
      await first.server.exited;
      await waitFor("the tools removed", () => !store.tools.has("web__echo"));
      expect(source.servers()[0]?.state).toBe("down");
      const second = await startEverythingHttp(first.port);
      try {
        await waitFor("the tools back", () => store.tools.has("web__echo"), 15_000);
        const again = await runCall(store, "web__echo", { message: "again" });
        expect(textOf(again.message)).toBe("Echo: again");
      } finally {
        await second.server.stop();
      }
    } finally {
      await source.close();
      await first.server.stop();
    }
  });
});
