/**
 * The settings catalogue (`SETTINGS`): every variable it declares is in the generated
 * reference, a malformed value fails naming its variable (in the readers and, through the
 * compiled processes as deployed, at start), and each value comes from one place, with an
 * option given in code over the environment over the default.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ConfigError,
  type CoordinatorOptions,
  DEFAULT_HTTP_LIMITS,
  DEFAULTS,
  defaultOf,
  type LlmCall,
  type ProcessRole,
  readClusterConfig,
  readSetting,
  readSettings,
  SETTINGS,
  type SettingName,
  settingOr,
  startCoordinator,
  startToolWorker,
  ToolStore,
} from "@yiem/core";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, spawnCommand } from "../support/processes.js";

const names = Object.keys(SETTINGS) as SettingName[];
const envNames = names.map((name) => SETTINGS[name].env);

describe("the settings catalogue", () => {
  it("declares each environment variable once, and the reference documents every one", () => {
    expect(new Set(envNames).size).toBe(envNames.length);
    const reference = readFileSync(join(repoRoot, "docs/CONFIGURATION.md"), "utf8");
    for (const env of envNames) expect(reference, env).toContain(`| \`${env}\` |`);
    const rows = reference.split("\n").filter((line) => /^\| `[A-Z0-9_]+` \|/.test(line));
    expect(rows).toHaveLength(envNames.length);
  });

  it("gives every role at least the Redis and the key namespace", () => {
    for (const role of ["coordinator", "worker", "gateway", "cli"] as ProcessRole[]) {
      const settings = readSettings(role, {}) as Record<string, unknown>;
      expect(settings.redisUrl, role).toBe("redis://127.0.0.1:6379");
      expect(settings.prefix, role).toBe("yiem");
    }
    expect(Object.keys(readSettings("cli", {}))).not.toContain("leaseMs");
  });

  it("keeps every default it took over (the values of DEFAULTS and the readers before it)", () => {
    expect({ ...DEFAULTS }).toEqual({
      redisUrl: "redis://127.0.0.1:6379",
      prefix: "yiem",
      clusterShards: 3,
      clusterReplicaAcks: 1,
      replicaAckTimeoutMs: 250,
      model: "gpt-4o-mini",
      agentName: "default",
      systemPrompt: "You are helpful assistant.",
      port: 3000,
      workerHost: "127.0.0.1",
      workerConcurrency: 16,
      workerTakeAtOnce: 4,
      queues: ["default"],
      coordinatorConcurrency: 512,
      heapGrowthPercent: 150,
      maxAgentDepth: 5,
      leaseMs: 10_000,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      aliveTtlMs: 1500,
      alivePollMs: 250,
      limitedLockDurationMs: 5000,
      stoppedWorkerGraceMs: 5000,
      shutdownGraceMs: 10_000,
      workerDrainMs: 30_000,
      maxToolCalls: 64,
      maxArgumentBytes: 256 * 1024,
      maxArgumentDepth: 64,
      maxInputBytes: 1024 * 1024,
      maxContextBytes: 4 * 1024 * 1024,
      eventStreamMaxBytes: 8 * 1024 * 1024,
      requestRetentionS: 3600,
      toolJobRetentionS: 3600,
      logLevel: "info",
      toolRetries: 0,
      responseTimeoutMs: 120_000,
      decisionTimeoutMs: 30_000,
    });
    expect(readSettings("gateway", {})).toMatchObject({
      gatewayPort: 8080,
      gatewayHost: "127.0.0.1",
      gatewayCorsOrigins: [],
      gatewayMaxBodyBytes: 1024 * 1024 + 64 * 1024,
      gatewayWaitMs: 25_000,
      gatewayHeartbeatMs: 15_000,
      apiKeysFile: undefined,
    });
    expect(readSettings("coordinator", {})).toMatchObject({
      healthStallMs: 10_000,
      httpMaxConnections: DEFAULT_HTTP_LIMITS.maxConnections,
      sandboxConcurrency: 4,
      weatherTimeoutMs: 10_000,
      weatherBaseUrl: "https://api.open-meteo.com",
      geocodingBaseUrl: "https://geocoding-api.open-meteo.com",
      allowWriteTool: false,
      toolsStrict: false,
      adminReadOnly: false,
      httpFetchAllow: [],
      shards: undefined,
      replicaAcks: undefined,
      adminHost: undefined,
      approvalTimeoutMs: undefined,
      builtinTools: undefined,
    });
    expect(readSettings("cli", {}).coordinatorWaitS).toBe(10);
    expect(DEFAULT_HTTP_LIMITS.maxConnections).toBe(256);
  });

  it("fails a malformed value with a ConfigError naming its variable", () => {
    const bad: Array<[ProcessRole, Record<string, string>, string]> = [
      [
        "coordinator",
        { YIEM_LEASE_MS: "soon" },
        'YIEM_LEASE_MS must be a positive integer, got "soon"',
      ],
      ["coordinator", { PORT: "-1" }, 'PORT must be a positive integer, got "-1"'],
      ["coordinator", { YIEM_REPLICA_ACKS: "1.5" }, "YIEM_REPLICA_ACKS must be a whole number"],
      ["coordinator", { YIEM_SANDBOX_CONCURRENCY: "0" }, "YIEM_SANDBOX_CONCURRENCY"],
      ["worker", { WORKER_CONCURRENCY: "many" }, "WORKER_CONCURRENCY"],
      ["worker", { YIEM_BUILTIN_TOOLS: "none,getTime" }, "YIEM_BUILTIN_TOOLS must be none"],
      ["gateway", { GATEWAY_PORT: "eighty" }, "GATEWAY_PORT must be a whole number"],
      [
        "cli",
        { YIEM_COORDINATOR_WAIT_S: "0" },
        'YIEM_COORDINATOR_WAIT_S must be a positive number, got "0"',
      ],
    ];
    for (const [role, env, message] of bad) {
      expect(() => readSettings(role, env), message).toThrow(ConfigError);
      expect(() => readSettings(role, env), message).toThrow(message);
    }
    // A role never trips on what it does not read.
    expect(readSettings("cli", { WORKER_CONCURRENCY: "many" }).prefix).toBe("yiem");
  });

  it("reads a blank variable as unset, trims values and lists", () => {
    expect(readSetting("leaseMs", { YIEM_LEASE_MS: "  " })).toBe(10_000);
    expect(readSetting("prefix", { YIEM_PREFIX: " team " })).toBe("team");
    expect(readSetting("queues", { YIEM_QUEUES: " a, ,b " })).toEqual(["a", "b"]);
    expect(readSetting("queues", { YIEM_QUEUES: "," })).toEqual(["default"]);
    expect(readSetting("toolsStrict", { YIEM_TOOLS_STRICT: "true" })).toBe(false);
    expect(readSetting("toolsStrict", { YIEM_TOOLS_STRICT: "1" })).toBe(true);
  });

  it("takes an option given in code over the environment, and the environment over the default", () => {
    const env = { YIEM_LEASE_MS: "5000" };
    expect(settingOr("leaseMs", 7000, env)).toBe(7000);
    expect(settingOr("leaseMs", undefined, env)).toBe(5000);
    expect(settingOr("leaseMs", undefined, {})).toBe(10_000);
    expect(defaultOf("leaseMs")).toBe(SETTINGS.leaseMs.default);
    // The reader applies the default once; DEFAULTS and readClusterConfig take the same one.
    expect(readClusterConfig({}).leaseMs).toBe(DEFAULTS.leaseMs);
    expect(readSettings("coordinator", env).leaseMs).toBe(5000);
  });
});

describe("the option shapes the processes share", () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(() => redis.stop());

  /** A model call nobody makes: these coordinators take no request. */
  const llmCall: LlmCall = async () => {
    throw new Error("not called");
  };

  it("serves the coordinator's HTTP side on `host`, and still on the deprecated `admin.host`", async () => {
    const base = { redis: redis.url, prefix: redis.prefix, llmCall, port: 0 };
    const cases: Array<[Partial<CoordinatorOptions>, string]> = [
      [{ host: "localhost" }, "http://localhost:"],
      [{ admin: { host: "localhost" } }, "http://localhost:"],
      [{ host: "127.0.0.1", admin: { host: "localhost" } }, "http://127.0.0.1:"],
      [{}, "http://127.0.0.1:"],
    ];
    for (const [options, url] of cases) {
      const toolStore = new ToolStore({ name: "settings" });
      const coordinator = await startCoordinator({ ...base, ...options, toolStore });
      try {
        expect(coordinator.url, JSON.stringify(options)).toMatch(new RegExp(`^${url}\\d+$`));
      } finally {
        await coordinator.close(0);
      }
    }
  });

  it("gives a worker's HTTP side the catalogue's default host when none is given", async () => {
    const toolStore = new ToolStore({ name: "settings-worker" });
    const worker = await startToolWorker({
      redis: redis.url,
      prefix: redis.prefix,
      toolStore,
      port: 0,
    });
    try {
      expect(worker.url).toMatch(new RegExp(`^http://${DEFAULTS.workerHost}:\\d+$`));
    } finally {
      await worker.close();
    }
  });
});

describe("a process given a malformed setting", () => {
  const cases: Array<[string, string[], Record<string, string>, string]> = [
    [
      "coordinator",
      ["node", "apps/coordinator/dist/main.bundle.js"],
      { YIEM_LEASE_MS: "soon" },
      'coordinator failed to start: YIEM_LEASE_MS must be a positive integer, got "soon"',
    ],
    [
      "tool worker",
      ["node", "apps/tool-worker/dist/main.bundle.js"],
      { WORKER_CONCURRENCY: "0" },
      'tool worker failed to start: WORKER_CONCURRENCY must be a positive integer, got "0"',
    ],
    [
      "gateway",
      ["node", "apps/gateway/dist/main.bundle.js"],
      { GATEWAY_WAIT_MS: "25s" },
      'gateway failed to start: GATEWAY_WAIT_MS must be a whole number (0 or more), got "25s"',
    ],
  ];

  it.each(cases)(
    "%s exits 1 naming the variable, before it touches Redis",
    async (_, command, env, line) => {
      // A Redis nobody listens on: the start must fail on the setting, not on the connection.
      const proc = spawnCommand(command, { ...env, REDIS_URL: "redis://127.0.0.1:1" });
      expect(await proc.exited).toBe(1);
      expect(proc.lines).toContain(line);
    },
  );
});
