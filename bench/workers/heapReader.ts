/**
 * Reads another Node process's heap after full collections, through its inspector (the
 * process started with `--inspect=127.0.0.1:<port>`): `HeapProfiler.collectGarbage` a few times,
 * then `process.memoryUsage()` evaluated there. Prints `{"heap":{heapUsed,rss,external,
 * arrayBuffers}}` (bytes) and exits. Runs with `--experimental-websocket` (Node 20's
 * `WebSocket`), which is why it is a process of its own.
 *
 * Environment: `BENCH_INSPECTOR_URL` (the `ws://…` URL the process printed);
 * `BENCH_HEAP_SNAPSHOT` (optional), a path to write a heap snapshot to after the collections
 * (`HeapProfiler.takeHeapSnapshot`; open it in Chrome's DevTools, or diff two with
 * `bench/workers/heapDiff.ts`).
 */

import { writeFile } from "node:fs/promises";

/** A minimal Chrome DevTools Protocol session over one WebSocket. */
function openSession(url: string) {
  const socket = new WebSocket(url);
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const chunks: string[] = [];
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: { chunk?: string };
      result?: unknown;
    };
    if (message.method === "HeapProfiler.addHeapSnapshotChunk")
      chunks.push(message.params?.chunk ?? "");
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  const opened = new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve());
    socket.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)));
  });
  return {
    opened,
    send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    /** The snapshot chunks received so far, emptied. */
    takeChunks: () => chunks.splice(0).join(""),
    close: () => socket.close(),
  };
}

async function main(): Promise<void> {
  const url = process.env.BENCH_INSPECTOR_URL;
  if (!url) throw new Error("BENCH_INSPECTOR_URL is required");
  const session = openSession(url);
  await session.opened;
  for (let i = 0; i < 3; i++) await session.send("HeapProfiler.collectGarbage");
  const evaluated = (await session.send("Runtime.evaluate", {
    expression: "JSON.stringify(process.memoryUsage())",
    returnByValue: true,
  })) as { result?: { value?: string } };
  const snapshotPath = process.env.BENCH_HEAP_SNAPSHOT;
  if (snapshotPath) {
    await session.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    await writeFile(snapshotPath, session.takeChunks());
  }
  session.close();
  console.log(JSON.stringify({ heap: JSON.parse(evaluated.result?.value ?? "{}") }));
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(`heap reader failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
