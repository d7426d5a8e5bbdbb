import { connect as connectTcp } from "node:net";

/** A command `MONITOR` showed. */
export interface MonitoredCommand {
  /** Redis's clock when it ran the command, ms since the epoch (µs precision). */
  at: number;
  /** `ip:port` of the client that sent it, or `lua` for a command a script ran. */
  source: string;
  args: string[];
}

/** A running `startRawMonitor`. */
export interface RawMonitor {
  /** Every command seen so far, in the order Redis ran them. */
  readonly seen: MonitoredCommand[];
  stop(): void;
}

/** The quoted arguments of a `MONITOR` line (`"set" "k" "v\"x"`), unescaped. */
function readArgs(text: string): string[] {
  const args: string[] = [];
  const quoted = /"((?:[^"\\]|\\.)*)"/g;
  for (let match = quoted.exec(text); match; match = quoted.exec(text)) {
    args.push(
      (match[1] ?? "").replace(/\\(x[0-9a-f]{2}|.)/g, (_, escaped: string) =>
        escaped.length === 3
          ? String.fromCharCode(Number.parseInt(escaped.slice(1), 16))
          : (({ n: "\n", r: "\r", t: "\t" } as Record<string, string>)[escaped] ?? escaped),
      ),
    );
  }
  return args;
}

/**
 * `MONITOR` on a plain socket of its own (ioredis' `monitor()` can take a line that comes in
 * the same chunk as its `OK` for a reply, on a busy server); resolves once Redis monitors.
 *
 * @example const monitor = await startRawMonitor(redis.url); …; monitor.stop(); monitor.seen
 */
export async function startRawMonitor(redisUrl: string): Promise<RawMonitor> {
  const socket = connectTcp(Number(new URL(redisUrl).port), "127.0.0.1");
  const seen: MonitoredCommand[] = [];
  let buffered = "";
  let onOk: (() => void) | undefined;
  const started = new Promise<void>((resolve, reject) => {
    onOk = resolve;
    socket.once("error", reject);
  });
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\r\n"); end >= 0; end = buffered.indexOf("\r\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (line === "+OK") onOk?.();
      const match = /^\+(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (match)
        seen.push({
          at: Number(match[1]) * 1000,
          source: match[2] ?? "",
          args: readArgs(match[3] ?? ""),
        });
    }
  });
  socket.write("MONITOR\r\n");
  await started;
  return { seen, stop: () => socket.destroy() };
}
