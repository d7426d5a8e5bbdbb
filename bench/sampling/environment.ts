import { readFile } from "node:fs/promises";
import { cpus, loadavg, platform, release } from "node:os";
import { join } from "node:path";
import type { RedisClient } from "@yiem/core";
import { repoRoot } from "../../test/support/processes.js";

/** Where the figures were taken. */
export interface BenchEnvironment {
  cores: number;
  cpuModel: string;
  os: string;
  node: string;
  redis: string;
  bullmq: string;
  date: string;
  /** 1-minute load average when the run started (others may share the machine). */
  loadAverageAtStart: number;
  /** 1-minute load average when the measurements ended. */
  loadAverageAtEnd: number;
}

/** The machine's 1-minute load average, rounded to hundredths. */
export function loadAverage(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

async function packageVersion(name: string): Promise<string> {
  const text = await readFile(join(repoRoot, "node_modules", name, "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/** Reads the machine, Node, Redis (INFO server) and BullMQ versions, the date and the load. */
export async function readEnvironment(redis: RedisClient): Promise<BenchEnvironment> {
  const info = await redis.info("server");
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    os: `${platform()} ${release()}`,
    node: process.version,
    redis: /^redis_version:(\S+)/m.exec(info)?.[1] ?? "unknown",
    bullmq: await packageVersion("bullmq"),
    date: new Date().toISOString(),
    loadAverageAtStart: loadAverage(),
    loadAverageAtEnd: Number.NaN, // set when the measurements end
  };
}
