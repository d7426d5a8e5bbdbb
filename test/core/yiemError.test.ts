/**
 * Every error Yiem's packages export is a `YiemError`: its own name, fields and message as
 * before, a retry intent programs read instead of the message (`isTransient`), and its context.
 */
import {
  AdminCredentialsError,
  AgentShutdownError,
  AgentsFileError,
  ConfigError,
  checkAdminCredentials,
  DecisionRefusedError,
  defineAgent,
  InvalidAgentError,
  InvalidCoordinatorJobError,
  InvalidToolError,
  InvalidUserInputError,
  isTransient,
  McpConfigError,
  PortInUseError,
  RedisUnavailableError,
  ResponseTimeoutError,
  readClusterConfig,
  YiemError,
} from "@yiem/core";
import { YiemError as YiemErrorOfClient } from "@yiem/core/client";
import { YiemError as YiemErrorAlone } from "@yiem/core/errors";
import { LeaseLostError } from "@yiem/core/internal";
import { FetchRefusedError, ToolLoadingError } from "@yiem/tools";
import { describe, expect, it } from "vitest";

/** What `make` threw. */
function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (err) {
    return err;
  }
  throw new Error("nothing was thrown");
}

describe("YiemError, the base of every Yiem error", () => {
  it("is one class, whichever entry point it is imported from", () => {
    expect(YiemErrorOfClient).toBe(YiemError);
    expect(YiemErrorAlone).toBe(YiemError);
  });

  it("keeps each error's name and message, and says whether trying again may succeed", () => {
    const cases: Array<[unknown, string, string, "terminal" | "transient"]> = [
      [
        new RedisUnavailableError("127.0.0.1:6379", new Error("connect ECONNREFUSED")),
        "RedisUnavailableError",
        "Redis unreachable at 127.0.0.1:6379: connect ECONNREFUSED",
        "transient",
      ],
      [
        new ResponseTimeoutError("r-1", 50),
        "ResponseTimeoutError",
        "no response for run r-1 within 50 ms (is a coordinator running?)",
        "transient",
      ],
      [new LeaseLostError("s-1"), "LeaseLostError", "lost the lease on session s-1", "terminal"],
      [
        new InvalidCoordinatorJobError("input", "is required"),
        "InvalidCoordinatorJobError",
        "input: is required",
        "terminal",
      ],
      [
        new DecisionRefusedError("no-op: decided"),
        "DecisionRefusedError",
        "no-op: decided",
        "terminal",
      ],
      [new AgentShutdownError(), "AgentShutdownError", "the agent was shut down", "terminal"],
      [
        new InvalidUserInputError("input", "is empty"),
        "InvalidUserInputError",
        "input: is empty",
        "terminal",
      ],
      [
        new InvalidToolError("a:b", "bad name"),
        "InvalidToolError",
        'tool "a:b" refused: bad name',
        "terminal",
      ],
      [
        new McpConfigError("mcp.json", "git", "command", "is required"),
        "McpConfigError",
        'YIEM_MCP_CONFIG mcp.json: server "git": command: is required',
        "terminal",
      ],
      [new PortInUseError(3000), "PortInUseError", "port 3000 is in use", "terminal"],
      [
        new AgentsFileError("agents.yaml", "not found"),
        "AgentsFileError",
        "agents.yaml: not found",
        "terminal",
      ],
      [
        thrownBy(() => readClusterConfig({ YIEM_LEASE_MS: "-1" })),
        "ConfigError",
        'YIEM_LEASE_MS must be a positive integer, got "-1"',
        "terminal",
      ],
      [
        thrownBy(() => defineAgent({ name: "a", instructions: "x" } as never)),
        "InvalidAgentError",
        'agent "a": model: is required',
        "terminal",
      ],
      [
        new FetchRefusedError("127.0.0.1: loopback"),
        "FetchRefusedError",
        "127.0.0.1: loopback",
        "terminal",
      ],
      [
        new ToolLoadingError([{ path: "t.ts", error: "boom" }]),
        "ToolLoadingError",
        "YIEM_TOOLS_STRICT=1 and 1 tool file(s) failed to load:\n  t.ts: boom",
        "terminal",
      ],
    ];
    for (const [err, name, message, retry] of cases) {
      expect(err).toBeInstanceOf(YiemError);
      const typed = err as YiemError;
      expect([typed.name, typed.message, typed.retry, isTransient(typed)]).toEqual([
        name,
        message,
        retry,
        retry === "transient",
      ]);
    }
  });

  it("a subclass stays what it was: an AdminCredentialsError is a ConfigError", () => {
    const err = thrownBy(() => checkAdminCredentials("admin", undefined));
    expect(err).toBeInstanceOf(AdminCredentialsError);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toBeInstanceOf(YiemError);
    expect((err as YiemError).name).toBe("AdminCredentialsError");
  });

  it("names its context: the session, the request, the tool", () => {
    expect(new LeaseLostError("s-1").context).toEqual({ sessionId: "s-1" });
    const timeout = new ResponseTimeoutError("r-1", 50);
    expect([timeout.context, timeout.requestId, timeout.runId]).toEqual([
      { requestId: "r-1" },
      "r-1",
      "r-1",
    ]);
    expect(new InvalidToolError("fetch", "x").context).toEqual({ toolName: "fetch" });
    expect(new InvalidAgentError("a", "model", "x").context).toEqual({});
  });

  it("keeps a cause only when given one, and defaults to terminal", () => {
    const cause = new Error("ECONNRESET");
    expect(new YiemError("x", { retry: "transient", cause }).cause).toBe(cause);
    expect("cause" in new YiemError("x")).toBe(false);
    expect(new YiemError("x").retry).toBe("terminal");
    expect(isTransient(new Error("Connection is closed."))).toBe(false); // a foreign error: classify it first
  });
});
