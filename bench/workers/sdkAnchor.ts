/**
 * The `openai` SDK alone, in a process of its own: streamed chat completions against the
 * scripted model server, as many in flight as asked, and nothing else. Measures its own CPU
 * (`process.cpuUsage()`, every thread of the process) around the measured calls, after a
 * warm-up, and prints `{"anchor":{calls,chunks,cpuMs,wallMs}}`; then exits.
 *
 * Environment: `BENCH_SDK_BASE_URL`, `BENCH_SDK_BODIES` (a JSON file: the request bodies to
 * send, taken in turn), `BENCH_SDK_WARMUP`, `BENCH_SDK_CALLS`, `BENCH_SDK_IN_FLIGHT`, and
 * `BENCH_SDK_FETCH=yiem` to send with Yiem's `createLlmFetch` (as the coordinator's client
 * does) instead of the SDK's default, Node's `fetch`.
 */
import { readFile } from "node:fs/promises";
import { createLlmFetch } from "@yiem/core/internal";
import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";

interface AnchorEnv {
  baseURL: string;
  bodies: ChatCompletionCreateParamsStreaming[];
  warmup: number;
  calls: number;
  inFlight: number;
}

/** What the measured calls cost. */
interface AnchorFigures {
  calls: number;
  chunks: number;
  cpuMs: number;
  wallMs: number;
}

async function readEnv(): Promise<AnchorEnv> {
  const { BENCH_SDK_BASE_URL, BENCH_SDK_BODIES } = process.env;
  if (!BENCH_SDK_BASE_URL || !BENCH_SDK_BODIES)
    throw new Error("BENCH_SDK_BASE_URL and BENCH_SDK_BODIES are required");
  const bodies = JSON.parse(await readFile(BENCH_SDK_BODIES, "utf8")) as Array<
    Record<string, unknown>
  >;
  return {
    baseURL: BENCH_SDK_BASE_URL,
    bodies: bodies.map(toStreamingBody),
    warmup: Number(process.env.BENCH_SDK_WARMUP ?? 100),
    calls: Number(process.env.BENCH_SDK_CALLS ?? 1000),
    inFlight: Number(process.env.BENCH_SDK_IN_FLIGHT ?? 64),
  };
}

/** A recorded request body, streamed with the usage chunk as Yiem's streamed calls ask. */
function toStreamingBody(body: Record<string, unknown>): ChatCompletionCreateParamsStreaming {
  return {
    ...(body as unknown as ChatCompletionCreateParamsStreaming),
    stream: true,
    stream_options: { include_usage: true },
  };
}

/** One streamed completion, every chunk read; resolves with the number of chunks. */
async function streamOnce(
  client: OpenAI,
  body: ChatCompletionCreateParamsStreaming,
): Promise<number> {
  const stream = await client.chat.completions.create(body, { maxRetries: 0 });
  let chunks = 0;
  for await (const _chunk of stream) chunks++;
  return chunks;
}

/** Makes `count` calls, `inFlight` at a time, bodies in turn; resolves with the chunks read. */
async function runCalls(client: OpenAI, env: AnchorEnv, count: number): Promise<number> {
  let next = 0;
  let chunks = 0;
  const lane = async () => {
    while (next < count) {
      const body = env.bodies[next++ % env.bodies.length];
      if (!body) continue;
      const read = await streamOnce(client, body); // not `chunks += await …`: lanes interleave
      chunks += read;
    }
  };
  await Promise.all(Array.from({ length: Math.min(env.inFlight, count) }, lane));
  return chunks;
}

function readCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function measure(env: AnchorEnv): Promise<AnchorFigures> {
  const yiemFetch = process.env.BENCH_SDK_FETCH === "yiem" ? { fetch: createLlmFetch() } : {};
  const client = new OpenAI({
    apiKey: "sk-bench-anchor",
    baseURL: env.baseURL,
    maxRetries: 0,
    ...yiemFetch,
  });
  await runCalls(client, env, env.warmup);
  const cpuBefore = readCpuMs();
  const started = performance.now();
  const chunks = await runCalls(client, env, env.calls);
  return {
    calls: env.calls,
    chunks,
    cpuMs: readCpuMs() - cpuBefore,
    wallMs: performance.now() - started,
  };
}

async function main(): Promise<void> {
  const figures = await measure(await readEnv());
  console.log(JSON.stringify({ anchor: figures }));
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(`sdk anchor failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
