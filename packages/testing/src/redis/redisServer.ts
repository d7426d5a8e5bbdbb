import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis, type RedisOptions } from "ioredis";
import { freePort } from "../ports/freePort.js";

/** A Redis for one test file: the shared one of `REDIS_URL`, or a private `redis-server`. */
export interface TestRedis {
  url: string;
  /** A fresh key prefix, so tests sharing a Redis never see each other's keys. */
  prefix: string;
  /** The CA certificate file when the server speaks TLS (clients must trust it). */
  caFile?: string;
  /** True when this file started the server (and may kill or restart it). */
  owned: boolean;
  /** Kills the server with `signal` (owned servers only). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and data folder (owned servers only). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** `redis-server` arguments every test server starts with: `port` on 127.0.0.1, data in `dir`. */
export function loopbackServerArgs(port: number, dir: string): string[] {
  return ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir];
}

async function waitForPing(
  url: string,
  extra: RedisOptions = {},
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const redis = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...extra,
    });
    redis.on("error", () => undefined);
    try {
      await redis.connect();
      await redis.ping();
      return;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`redis at ${url} did not answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      redis.disconnect();
    }
  }
}

/** A fresh key prefix, so tests sharing a Redis never see each other's keys. */
export function uniquePrefix(): string {
  return `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A Redis for tests: `REDIS_URL` when set (unless `privateServer`), else a private
 * `redis-server` from PATH on a free port (AOF on when `appendOnly`, fsynced as `appendFsync`
 * says: Redis's default `everysec` unless given). Tests that kill or restart Redis must ask for
 * `privateServer: true`.
 */
export async function startTestRedis(
  options: {
    privateServer?: boolean;
    appendOnly?: boolean;
    appendFsync?: "always" | "everysec" | "no";
    requirePass?: string;
    aclLines?: string[];
    tls?: boolean;
  } = {},
): Promise<TestRedis> {
  const shared = process.env.REDIS_URL;
  if (shared && !options.privateServer) {
    const none = async () => {
      throw new Error("this test Redis is shared (REDIS_URL): ask for privateServer to kill it");
    };
    return {
      url: shared,
      prefix: uniquePrefix(),
      owned: false,
      kill: none,
      restart: none,
      stop: async () => {},
    };
  }
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "yiem-redis-"));
  const args = [
    ...loopbackServerArgs(port, dir),
    "--save",
    "",
    "--appendonly",
    options.appendOnly ? "yes" : "no",
    ...(options.appendOnly && options.appendFsync ? ["--appendfsync", options.appendFsync] : []),
  ];
  if (options.aclLines?.length) {
    // With an ACL file the default user's password lives in the file too.
    const defaultUser = options.requirePass
      ? [`user default on >${options.requirePass} ~* &* +@all`]
      : [];
    const aclFile = join(dir, "users.acl");
    await writeFile(aclFile, `${[...defaultUser, ...options.aclLines].join("\n")}\n`);
    args.push("--aclfile", aclFile);
  } else if (options.requirePass) {
    args.push("--requirepass", options.requirePass);
  }
  const auth = options.requirePass ? `:${encodeURIComponent(options.requirePass)}@` : "";
  const tls = options.tls ? makeTlsFiles(dir) : undefined;
  if (tls)
    args.push(
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      tls.cert,
      "--tls-key-file",
      tls.key,
      "--tls-ca-cert-file",
      tls.ca,
      "--tls-auth-clients",
      "no",
    );
  const url = `${tls ? "rediss" : "redis"}://${auth}127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn("redis-server", args, { stdio: "ignore" });
    child = started;
    started.once("error", () => undefined);
    try {
      await waitForPing(url, tls ? { tls: { ca: readFileSync(tls.ca) } } : {});
    } catch (err) {
      started.kill("SIGKILL"); // never leave a server behind a failed start
      throw err;
    }
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill(signal);
    });
  };
  await start();
  return {
    url,
    caFile: tls?.ca,
    prefix: uniquePrefix(),
    owned: true,
    kill,
    restart: start,
    stop: async () => {
      await kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A throw-away CA and a server certificate for 127.0.0.1, made with openssl in `dir`. */
function makeTlsFiles(dir: string): { ca: string; cert: string; key: string } {
  const file = (name: string) => join(dir, name);
  const run = (args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=yiem-test-ca",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
  ]);
  run([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    file("server.key"),
    "-out",
    file("server.csr"),
  ]);
  const ext = file("san.ext");
  execFileSync("sh", ["-c", `printf 'subjectAltName=IP:127.0.0.1' > '${ext}'`]);
  run([
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.crt"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    ext,
    "-out",
    file("server.crt"),
  ]);
  return { ca: file("ca.crt"), cert: file("server.crt"), key: file("server.key") };
}
