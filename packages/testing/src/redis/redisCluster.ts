import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort } from "../ports/freePort.js";
import { loopbackServerArgs, uniquePrefix } from "./redisServer.js";

/** How many hash slots a Redis Cluster has. */
export const CLUSTER_SLOT_COUNT = 16384;

const NODE_COUNT = 6;
/** `--cluster-port` (used to pick the bus port, see `startTestRedisCluster`) came with Redis 7. */
const MIN_REDIS_MAJOR = 7;
const execFileAsync = promisify(execFile);

/** A master of a test cluster, as `CLUSTER NODES` sees it now. */
export interface ClusterMaster {
  url: string;
  port: number;
  /** The pid of its `redis-server` process. */
  pid: number;
}

/** A private Redis Cluster (3 masters, 3 replicas) on 127.0.0.1, owned by one test file. */
export interface TestRedisCluster {
  /** The `redis://127.0.0.1:PORT` URL of each of the six nodes. */
  nodes: string[];
  /** `nodes` comma-separated: the value for a `REDIS_CLUSTER_NODES` environment variable. */
  nodesEnv: string;
  /** A fresh key prefix (no hash tag: add `{...}` where keys must share a slot). */
  prefix: string;
  /** The live masters, from `CLUSTER NODES` of a live node. */
  masters(): Promise<ClusterMaster[]>;
  /**
   * Kills (default SIGKILL) a master that holds slots, the one serving `key` when given;
   * resolves with its port once it exited.
   */
  killMaster(signal?: NodeJS.Signals, key?: string): Promise<number>;
  /**
   * Resolves once every live node reports `cluster_state:ok` with all slots served and no
   * killed node still owning slots in any node's view (so a replica took over).
   */
  waitForState(state: "ok", timeoutMs?: number): Promise<void>;
  /** Calls of data commands per live master URL, from `INFO commandstats` (see `dataCommandCalls`). */
  commandCountsPerMaster(): Promise<Map<string, number>>;
  /** Calls of one command (e.g. `wait`) summed over the live masters, from `INFO commandstats`. */
  commandCalls(command: string): Promise<number>;
  /** `CONFIG RESETSTAT` on every live node. */
  resetStats(): Promise<void>;
  /** Kills every node and removes their folders. */
  stop(): Promise<void>;
}

/** One `redis-server` of a test cluster. */
interface ClusterNodeProcess {
  port: number;
  url: string;
  dir: string;
  child: ChildProcess;
  exited: Promise<void>;
}

/** One line of `CLUSTER NODES`. */
interface ClusterNodeLine {
  id: string;
  port: number;
  flags: string[];
  slotRanges: string[];
}

let clusterSupport: boolean | undefined;

/**
 * Whether the `redis-server` and `redis-cli` on PATH can run a test cluster: Redis 7 or newer,
 * a server that accepts the cluster directives used here, and `redis-cli --cluster`. Checked
 * once per process without starting a server (a few ms).
 */
export function redisSupportsCluster(): boolean {
  clusterSupport ??=
    redisServerMajorVersion() >= MIN_REDIS_MAJOR &&
    redisServerAcceptsClusterConfig() &&
    redisCliHasClusterManager();
  return clusterSupport;
}

/** The major version of `redis-server` on PATH, or 0 when there is none. */
function redisServerMajorVersion(): number {
  const result = spawnSync("redis-server", ["--version"], { encoding: "utf8", timeout: 5_000 });
  const match = /v=(\d+)\./.exec(result.stdout ?? "");
  return match?.[1] ? Number(match[1]) : 0;
}

/**
 * Whether `redis-server` loads the cluster configuration. With `--port 0` and no other
 * listener the server exits right after loading it, so nothing is started.
 */
function redisServerAcceptsClusterConfig(): boolean {
  const args = ["--port", "0", "--dir", tmpdir(), ...clusterDirectives(0, 2_000)];
  const result = spawnSync("redis-server", args, { encoding: "utf8", timeout: 5_000 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  return output.includes("Configuration loaded") && !output.includes("FATAL");
}

/**
 * Whether `redis-cli` on PATH has the cluster manager (`redis-cli --cluster create`). Its
 * `--cluster help` exits 1 even when it works, so the help text is what tells.
 */
function redisCliHasClusterManager(): boolean {
  const result = spawnSync("redis-cli", ["--cluster", "help"], {
    encoding: "utf8",
    timeout: 5_000,
  });
  return /Cluster Manager Commands[\s\S]*\bcreate\b/.test(`${result.stdout}${result.stderr}`);
}

/**
 * The cluster settings of every node.
 *
 * - `--cluster-port`: the bus port is picked free like the client port; the default (client
 *   port + 10000) can be taken, or past 65535 for an ephemeral port.
 * - `--cluster-replica-validity-factor 0`: a replica always runs for election, however long
 *   its link to the master has been down, so promotion never stalls on a "too old" replica.
 * - `--cluster-require-full-coverage` stays `yes` (the default, as in production): while a
 *   killed master's slots are not yet taken over every node answers CLUSTERDOWN, and
 *   `cluster_state:ok` means that all 16384 slots are served again, which is what
 *   `waitForState("ok")` waits for. Failover does not need `no`.
 * - `--repl-diskless-sync-delay 0`: a replica's first sync starts at once, not after the
 *   default 5 s wait for more replicas (that wait alone would triple the start time).
 */
function clusterDirectives(busPort: number, nodeTimeoutMs: number): string[] {
  return [
    "--cluster-enabled",
    "yes",
    "--cluster-port",
    String(busPort),
    "--cluster-node-timeout",
    String(nodeTimeoutMs),
    "--cluster-replica-validity-factor",
    "0",
    "--repl-diskless-sync-delay",
    "0",
    "--appendonly",
    "no",
    "--save",
    "",
  ];
}

/** `count` distinct free TCP ports on 127.0.0.1. */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

const runningServers = new Set<ChildProcess>();
/** The password of each node started with one (by port), for this fixture's own connections. */
const passwords = new Map<number, string>();
let exitHookInstalled = false;

/** Makes sure no `redis-server` outlives this process, even when `stop()` is never called. */
function killServersOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of runningServers) child.kill("SIGKILL");
  });
}

/** Starts one cluster-enabled `redis-server`, logging to `redis.log` in its own temp folder. */
async function startNode(
  port: number,
  busPort: number,
  nodeTimeoutMs: number,
  requirePass?: string,
): Promise<ClusterNodeProcess> {
  const dir = await mkdtemp(join(tmpdir(), `yiem-redis-cluster-${port}-`));
  const args = [
    ...loopbackServerArgs(port, dir),
    "--cluster-config-file",
    `nodes-${port}.conf`,
    ...clusterDirectives(busPort, nodeTimeoutMs),
    ...(requirePass ? ["--requirepass", requirePass, "--masterauth", requirePass] : []),
  ];
  if (requirePass) passwords.set(port, requirePass);
  const auth = requirePass ? `:${encodeURIComponent(requirePass)}@` : "";
  const log = openSync(join(dir, "redis.log"), "a");
  const child = spawn("redis-server", args, { stdio: ["ignore", log, log] });
  closeSync(log);
  child.once("error", () => undefined);
  runningServers.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => runningServers.delete(child));
  return { port, url: `redis://${auth}127.0.0.1:${port}`, dir, child, exited };
}

/** Whether the node's process has exited. */
function hasExited(node: ClusterNodeProcess): boolean {
  return node.child.exitCode !== null || node.child.signalCode !== null;
}

/** Sends `signal` to the node and resolves once it exited. */
async function killNode(node: ClusterNodeProcess, signal: NodeJS.Signals): Promise<void> {
  if (!hasExited(node)) node.child.kill(signal);
  await node.exited;
}

/** Runs `use` on a short-lived, non-retrying connection to one node. */
async function withNode<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({
    host: "127.0.0.1",
    port,
    password: passwords.get(port),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** Polls `check` every 100 ms until it is true; fails after `timeoutMs` naming `what`. */
async function waitUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: ${what} within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** `INFO <section>` (or `CLUSTER INFO` text) as a field → value record. */
function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

/** The `CLUSTER INFO` fields of one node. */
async function clusterInfo(port: number): Promise<Record<string, string>> {
  return parseInfo(await withNode(port, (redis) => redis.cluster("INFO")));
}

/** Parses `CLUSTER NODES` output (`<id> <ip:port@bus> <flags> <master> ... <slots>`). */
function parseClusterNodes(text: string): ClusterNodeLine[] {
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id = "", address = "", flags = "", , , , , , ...slotRanges] = line.trim().split(" ");
      const port = Number(/:(\d+)@/.exec(address)?.[1] ?? 0);
      return { id, port, flags: flags.split(","), slotRanges };
    });
}

/** One node's view of the cluster. */
async function clusterNodes(port: number): Promise<ClusterNodeLine[]> {
  return parseClusterNodes(String(await withNode(port, (redis) => redis.cluster("NODES"))));
}

/** Whether a `CLUSTER NODES` entry is a master that nobody flags as failing. */
function isHealthyMaster(line: ClusterNodeLine): boolean {
  return (
    line.flags.includes("master") && !line.flags.includes("fail") && !line.flags.includes("fail?")
  );
}

/**
 * Whether one node reports `cluster_state:ok` with every slot served, and sees every slot
 * owned by a master that is alive (`livePorts`), i.e. failovers of killed masters are done.
 */
async function nodeSeesHealthyCluster(port: number, livePorts: Set<number>): Promise<boolean> {
  const info = await clusterInfo(port);
  if (info.cluster_state !== "ok") return false;
  if (Number(info.cluster_slots_ok) !== CLUSTER_SLOT_COUNT) return false;
  const owners = (await clusterNodes(port)).filter((line) => line.slotRanges.length > 0);
  return owners.every((line) => isHealthyMaster(line) && livePorts.has(line.port));
}

/** Whether every live node sees a healthy cluster (see `nodeSeesHealthyCluster`). */
async function everyNodeSeesHealthyCluster(live: ClusterNodeProcess[]): Promise<boolean> {
  const livePorts = new Set(live.map((node) => node.port));
  const views = await Promise.all(live.map((n) => nodeSeesHealthyCluster(n.port, livePorts)));
  return views.every(Boolean);
}

/** Whether every node knows all six nodes, three of them replicas. */
async function everyNodeSeesAllReplicas(nodes: ClusterNodeProcess[]): Promise<boolean> {
  const views = await Promise.all(nodes.map((node) => clusterNodes(node.port)));
  return views.every(
    (view) =>
      view.length === NODE_COUNT && view.filter((l) => l.flags.includes("slave")).length === 3,
  );
}

/** Whether every replica has finished its first sync with its master. */
async function replicasInSync(nodes: ClusterNodeProcess[]): Promise<boolean> {
  const infos = await Promise.all(
    nodes.map(async (node) => parseInfo(await withNode(node.port, (r) => r.info("replication")))),
  );
  return infos.every((info) => info.role !== "slave" || info.master_link_status === "up");
}

/** Whether every node answers PING. */
async function everyNodeAnswersPing(nodes: ClusterNodeProcess[]): Promise<boolean> {
  const replies = await Promise.all(nodes.map((node) => withNode(node.port, (r) => r.ping())));
  return replies.every((reply) => reply === "PONG");
}

/** `redis-cli --cluster create` over the nodes: 3 masters, one replica each. */
async function createCluster(nodes: ClusterNodeProcess[]): Promise<void> {
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
  const password = passwords.get(nodes[0]?.port ?? 0);
  await execFileAsync(
    "redis-cli",
    [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      "1",
      "--cluster-yes",
      ...(password ? ["-a", password, "--no-auth-warning"] : []),
    ],
    { timeout: 30_000 },
  );
}

/** The live masters as a live node sees them, with the slots each holds. */
async function liveMasterLines(nodes: ClusterNodeProcess[]): Promise<ClusterNodeLine[]> {
  const live = nodes.filter((node) => !hasExited(node));
  for (const node of live) {
    const view = await clusterNodes(node.port).catch(() => undefined);
    if (!view) continue;
    const livePorts = new Set(live.map((n) => n.port));
    return view.filter((line) => isHealthyMaster(line) && livePorts.has(line.port));
  }
  throw new Error("redis cluster: no live node answers CLUSTER NODES");
}

/** Commands that clients and this fixture send to learn the topology, not to touch data. */
const HOUSEKEEPING_COMMAND =
  /^cmdstat_(info|ping|hello|select|readonly|replconf|psync|sync|(cluster|config|client|command)\|.*|command)$/;

/**
 * Sums `calls=` over `INFO commandstats`, leaving out topology housekeeping (INFO, PING,
 * CLUSTER, CONFIG, CLIENT, COMMAND, replication…), which ioredis and this fixture send to any node; what is
 * left is the node's share of data traffic. Redis 7 also counts the commands a script runs,
 * so one BullMQ EVALSHA shows as several calls (20 jobs: about 800).
 */
function dataCommandCalls(commandStats: string): number {
  let calls = 0;
  for (const [field, value] of Object.entries(parseInfo(commandStats))) {
    if (HOUSEKEEPING_COMMAND.test(field)) continue;
    calls += Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
  }
  return calls;
}

/**
 * Starts a private Redis Cluster of six `redis-server` processes on free ports of 127.0.0.1
 * (3 masters with one replica each; see `clusterDirectives` for the settings), creates it with
 * `redis-cli --cluster create` and resolves once every node reports `cluster_state:ok`, all
 * 16384 slots are assigned and every replica is in sync (about 2 s). `nodeTimeoutMs`
 * (`cluster-node-timeout`, default 2000) sets how soon a dead master is failed over;
 * `requirePass` protects every node (the node URLs carry it); `aclUsers` are `ACL SETUSER`
 * rules (`["yiem", "on", ">pw", "~*", "&*", "+@all"]`) set on every node once it is formed.
 * Requires `redisSupportsCluster()`.
 */
export async function startTestRedisCluster(
  options: { nodeTimeoutMs?: number; requirePass?: string; aclUsers?: string[][] } = {},
): Promise<TestRedisCluster> {
  killServersOnExit();
  const ports = await distinctFreePorts(NODE_COUNT * 2);
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2_000;
  const nodes = await Promise.all(
    ports
      .slice(0, NODE_COUNT)
      .map((port, i) =>
        startNode(port, ports[NODE_COUNT + i] ?? 0, nodeTimeoutMs, options.requirePass),
      ),
  );
  try {
    await formCluster(nodes);
    await setAclUsers(nodes, options.aclUsers ?? []);
  } catch (err) {
    await stopNodes(nodes); // never leave servers behind a failed start
    throw err;
  }
  return testClusterHandle(nodes);
}

/** Sets each `ACL SETUSER` rule list on every node. */
async function setAclUsers(nodes: ClusterNodeProcess[], users: string[][]): Promise<void> {
  for (const node of nodes) {
    for (const rules of users) {
      await withNode(node.port, (redis) => redis.call("ACL", "SETUSER", ...rules));
    }
  }
}

/** Joins six started nodes into a cluster and waits until it is healthy and replicated. */
async function formCluster(nodes: ClusterNodeProcess[]): Promise<void> {
  await waitUntil(() => everyNodeAnswersPing(nodes), 10_000, "not every node answered PING");
  await createCluster(nodes);
  await waitUntil(
    async () =>
      (await everyNodeSeesHealthyCluster(nodes)) &&
      (await everyNodeSeesAllReplicas(nodes)) &&
      (await replicasInSync(nodes)),
    30_000,
    "the new cluster did not reach cluster_state:ok with synced replicas",
  );
}

/** SIGKILLs every node and removes their folders. */
async function stopNodes(nodes: ClusterNodeProcess[]): Promise<void> {
  await Promise.all(nodes.map((node) => killNode(node, "SIGKILL")));
  for (const node of nodes) passwords.delete(node.port);
  await Promise.all(nodes.map((node) => rm(node.dir, { recursive: true, force: true })));
}

/** The live masters with their pids. */
async function liveMasters(nodes: ClusterNodeProcess[]): Promise<ClusterMaster[]> {
  return (await liveMasterLines(nodes)).map((line) => {
    const node = nodes.find((n) => n.port === line.port);
    return { url: `redis://127.0.0.1:${line.port}`, port: line.port, pid: node?.child.pid ?? 0 };
  });
}

/** Whether `slot` is in a `CLUSTER NODES` range (`0-5460`, or a single slot `42`). */
function inSlotRange(range: string, slot: number): boolean {
  const [from = -1, to = from] = range.split("-").map(Number);
  return slot >= from && slot <= to;
}

/** The slot of `key`, asked of any live node (`CLUSTER KEYSLOT`). */
async function slotOf(nodes: ClusterNodeProcess[], key: string): Promise<number> {
  const node = nodes.find((n) => !hasExited(n));
  if (!node) throw new Error("redis cluster: no live node");
  return withNode(node.port, async (redis) => Number(await redis.cluster("KEYSLOT", key)));
}

/**
 * Kills a live master that holds slots (the one serving `key`, when given) and resolves with
 * its port once it exited.
 */
async function killSlotOwner(
  nodes: ClusterNodeProcess[],
  signal: NodeJS.Signals,
  key?: string,
): Promise<number> {
  const masters = await liveMasterLines(nodes);
  const slot = key === undefined ? undefined : await slotOf(nodes, key);
  const owner = masters.find((line) =>
    slot === undefined
      ? line.slotRanges.length > 0
      : line.slotRanges.some((range) => inSlotRange(range, slot)),
  );
  const node = nodes.find((n) => n.port === owner?.port);
  if (!node) throw new Error("redis cluster: no live master holds slots");
  await killNode(node, signal);
  return node.port;
}

/** Data-command calls per live master URL (see `dataCommandCalls`). */
async function dataCallsPerMaster(nodes: ClusterNodeProcess[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const master of await liveMasters(nodes)) {
    const stats = await withNode(master.port, (redis) => redis.info("commandstats"));
    counts.set(master.url, dataCommandCalls(stats));
  }
  return counts;
}

/** Calls of `command` summed over the live masters. */
async function callsOnMasters(nodes: ClusterNodeProcess[], command: string): Promise<number> {
  let calls = 0;
  for (const master of await liveMasters(nodes)) {
    const stats = parseInfo(await withNode(master.port, (redis) => redis.info("commandstats")));
    calls += Number(/calls=(\d+)/.exec(stats[`cmdstat_${command}`] ?? "")?.[1] ?? 0);
  }
  return calls;
}

/** The `TestRedisCluster` over started, formed nodes. */
function testClusterHandle(nodes: ClusterNodeProcess[]): TestRedisCluster {
  const live = () => nodes.filter((node) => !hasExited(node));
  return {
    nodes: nodes.map((node) => node.url),
    nodesEnv: nodes.map((node) => node.url).join(","),
    prefix: uniquePrefix(),
    masters: () => liveMasters(nodes),
    killMaster: (signal: NodeJS.Signals = "SIGKILL", key?: string) =>
      killSlotOwner(nodes, signal, key),
    waitForState: (_state: "ok", timeoutMs = 30_000) =>
      waitUntil(
        () => everyNodeSeesHealthyCluster(live()),
        timeoutMs,
        "the live nodes did not all report cluster_state:ok",
      ),
    commandCountsPerMaster: () => dataCallsPerMaster(nodes),
    commandCalls: (command: string) => callsOnMasters(nodes, command),
    resetStats: async () => {
      await Promise.all(live().map((node) => withNode(node.port, (r) => r.config("RESETSTAT"))));
    },
    stop: () => stopNodes(nodes),
  };
}
