import { execFileSync } from "node:child_process";

/**
 * Which process holds each TCP connection to Redis at `redisPort` on this machine: local port →
 * pid (`ss -tnp`, established connections). Lets a MONITOR line (`127.0.0.1:<port>`) be told
 * by process.
 */
export function readPortOwners(redisPort: number): Map<string, number> {
  const owners = new Map<string, number>();
  const out = execFileSync("ss", ["-tnpH", "state", "established"], { encoding: "utf8" });
  for (const line of out.split("\n")) {
    const match = /\S+\s+\S+\s+(\S+):(\d+)\s+\S+:(\d+)\s+.*pid=(\d+)/.exec(line);
    if (match?.[4] && Number(match[3]) === redisPort) owners.set(match[2] ?? "", Number(match[4]));
  }
  return owners;
}

/** The value of `--name` on this process's command line, or `fallback`. */
export function readFlag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
