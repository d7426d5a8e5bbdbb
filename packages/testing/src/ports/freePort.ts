/**
 * Free TCP ports for test servers, picked so that two test processes running side by side
 * never pick the same one.
 */
import { mkdirSync, rmdirSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Ports `freePort` picks from: below Linux's default ephemeral range (32768–60999), from which
 * the kernel hands out the local ports of outgoing connections. A port taken from that range
 * could be given to another process's outgoing connection before the process it was picked
 * for binds it (a test that spawns a server on a free port then failed with "port in use").
 */
const PICKED_PORTS = { from: 20_000, to: 32_767 };

/**
 * Where picks are reserved across processes: one folder per port, made atomically. Two vitest
 * workers could otherwise pick the same free port, and the second server to bind it fails
 * (or, for `redis-server`, the test talks to the other test's server).
 */
const RESERVATIONS = join(tmpdir(), "yiem-test-ports");

/** How long a pick stays reserved: longer than any test file holds a server. */
const RESERVATION_MS = 15 * 60_000;

/** Whether `port` can be bound on 127.0.0.1 now (`0`: any port; resolves with the port bound, or 0). */
function tryBind(port: number): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(0));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Reserves `port` for this process unless another process reserved it in the last
 * `RESERVATION_MS`; a stale reservation is taken over. Never throws: a folder that cannot be
 * written reserves nothing (the bind check still holds).
 */
function reservePort(port: number): boolean {
  const folder = join(RESERVATIONS, String(port));
  try {
    mkdirSync(RESERVATIONS, { recursive: true });
    mkdirSync(folder);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return true;
  }
  try {
    if (Date.now() - statSync(folder).mtimeMs < RESERVATION_MS) return false;
    rmdirSync(folder);
    mkdirSync(folder);
    return true;
  } catch {
    return false; // another process took the stale reservation over first
  }
}

/**
 * A free TCP port on 127.0.0.1, picked at random below the kernel's ephemeral range (see
 * `PICKED_PORTS`) and reserved so that no other test process picks it for a while; after 50
 * taken ports, one the kernel chooses.
 *
 * @example const port = await freePort(); // start a server with --port port
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port =
      PICKED_PORTS.from + Math.floor(Math.random() * (PICKED_PORTS.to - PICKED_PORTS.from));
    if (!reservePort(port)) continue;
    if ((await tryBind(port)) === port) return port;
  }
  const port = await tryBind(0);
  if (port === 0) throw new Error("no free TCP port on 127.0.0.1");
  return port;
}
