/**
 * The gateway tests' helpers: a gateway process (from its sources, or compiled as deployed),
 * keys files, JSON calls, and a server-sent-events reader over fetch.
 */
import { execFile } from "node:child_process";
import { mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createApiKey } from "@yiem/core";
import { startProcessSlot, type TestProcess } from "@yiem/testing";
import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from "ai";
import OpenAI from "openai";
import { readMarkdownSnippets } from "../support/markdownSnippets.js";
import { repoRoot, testLaunch } from "../support/processes.js";

/** A running gateway process and its base URL. */
export interface GatewayProcess {
  url: string;
  process: TestProcess;
}

/**
 * Starts a gateway against the cluster of `env` (its REDIS_URL, YIEM_PREFIX…) on a free port,
 * with `extra` on top: as the tests launch apps (`testLaunch`: compiled, as deployed, `node
 * apps/gateway/dist/main.bundle.js`, unless `YIEM_TEST_LAUNCH=source`), or `compiled` whatever that says. Resolves once it logged `gateway ready` (45 s at most,
 * for a loaded machine; one that is not ready by then is stopped).
 */
export async function startGatewayProcess(
  env: Record<string, string>,
  extra: Record<string, string> = {},
  options: { compiled?: boolean } = {},
): Promise<GatewayProcess> {
  const slot = await startProcessSlot({
    role: "gateway",
    name: "gateway",
    env: { ...env, ...extra },
    cwd: repoRoot,
    launch: options.compiled ? "compiled" : testLaunch,
    readyTimeoutMs: 45_000,
  });
  return { url: slot.url ?? "", process: slot.current() };
}

/** A key of a test keys file: its secret and its line. */
export interface TestKey {
  name: string;
  secret: string;
  entry: Record<string, unknown>;
}

/** A new key named `name` with the given entry fields (scopes, sessions, limits…). */
export function makeKey(name: string, fields: Record<string, unknown>): TestKey {
  const { key, hash } = createApiKey();
  return { name, secret: key, entry: { name, hash, ...fields } };
}

/** Writes `keys` as a keys file (JSON Lines) at `file`, after `header` lines. */
export async function writeKeysFile(
  file: string,
  keys: TestKey[],
  header: string[] = [],
): Promise<void> {
  const lines = [...header, ...keys.map((key) => JSON.stringify(key.entry))];
  await writeFile(file, `${lines.join("\n")}\n`);
}

/**
 * Starts a gateway (`startGatewayProcess`) against the cluster of `env` that knows `keys` (a
 * keys file of its own, in a new temporary folder), with `extra` on top (e.g. `REDIS_URL` of a
 * proxy in front of the cluster's Redis).
 */
export async function startGatewayWithKeys(
  env: Record<string, string>,
  keys: TestKey[],
  extra: Record<string, string> = {},
): Promise<GatewayProcess> {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-gateway-keys-")), "keys.jsonl");
  await writeKeysFile(file, keys);
  return startGatewayProcess(env, { YIEM_API_KEYS: file, ...extra });
}

/**
 * Sends `messages` to the gateway's `/v1/chat` as the AI SDK's `useChat` does
 * (`DefaultChatTransport`) with key `secret`: the answer's chunk stream (30 s at most).
 */
export function sendChatMessages(
  gatewayUrl: string,
  secret: string,
  chatId: string,
  messages: UIMessage[],
): Promise<ReadableStream<UIMessageChunk>> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${gatewayUrl}/v1/chat`,
    headers: { Authorization: `Bearer ${secret}` },
  });
  return transport.sendMessages({
    trigger: "submit-message",
    chatId,
    messageId: undefined,
    messages,
    abortSignal: AbortSignal.timeout(30_000),
  });
}

/** What a JSON call answered. */
export interface JsonAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers by field
  body: any;
}

/** Calls the gateway at `url` with `secret` as the bearer token (none when undefined). */
export async function callGateway(
  url: string,
  secret: string | undefined,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (secret !== undefined) headers.authorization = `Bearer ${secret}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${url}${path}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

/** One server-sent event as received: its id (absent for live events), type and parsed data. */
export interface SseEvent {
  id?: string;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read events by field
  data: any;
}

/** An open event stream: its status, the events as they come, the comments seen, and a way to drop it. */
export interface SseStream {
  status: number;
  events: AsyncGenerator<SseEvent>;
  comments: string[];
  close(): void;
}

/**
 * Opens `GET <path>` as a server-sent-event stream (as `EventSource` does: `Last-Event-ID`
 * when given) and parses it per the SSE format: `id:`, `event:`, `data:` lines, a blank line
 * ending each event, `:` lines as comments.
 */
export async function openEventStream(
  url: string,
  secret: string,
  path: string,
  options: { lastEventId?: string } = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = {
    authorization: `Bearer ${secret}`,
    accept: "text/event-stream",
  };
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  const response = await fetch(`${url}${path}`, { headers, signal: controller.signal });
  const comments: string[] = [];
  return {
    status: response.status,
    events: parseEvents(response, comments),
    comments,
    close: () => controller.abort(),
  };
}

async function* parseEvents(response: Response, comments: string[]): AsyncGenerator<SseEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (line === "") {
          if (current.data.length > 0) {
            yield {
              id: current.id,
              event: current.event ?? "message",
              data: JSON.parse(current.data.join("\n")),
            };
          }
          current = { data: [] };
        } else if (line.startsWith(":")) comments.push(line.slice(1).trim());
        else if (line.startsWith("id: ")) current.id = line.slice(4);
        else if (line.startsWith("event: ")) current.event = line.slice(7);
        else if (line.startsWith("data: ")) current.data.push(line.slice(6));
      }
    }
  } catch (err) {
    if ((err as Error).name !== "AbortError") throw err;
  }
}

/**
 * The `openai` SDK pointed at a gateway's OpenAI-compatible face with `apiKey` (a key's secret,
 * or any text for a refused one), without the SDK's retries, so a refusal shows at once.
 */
export function openaiClient(gatewayUrl: string, apiKey: string, timeoutMs?: number): OpenAI {
  return new OpenAI({
    baseURL: `${gatewayUrl}/v1`,
    apiKey,
    maxRetries: 0,
    ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
  });
}

/** A chat message as the scripted model receives it (`request.body.messages`). */
export type Wire = { role: string; content: unknown };

/** The text of a wire message's content: a string, or its parts' `text` joined. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { text?: string }) => part.text ?? "").join("");
}

/**
 * Runs, with node, the example of docs/GATEWAY.md marked as run by `testFile` (its
 * `<!-- snippet: run by test/gateway/<testFile> … -->`), as written, saved as `script` in a
 * fresh folder that sees the repository's node_modules, against `gatewayUrl` with `secret`
 * (`YIEM_GATEWAY`, `YIEM_KEY`): its standard output, line by line.
 */
export async function runGatewayExample(
  testFile: string,
  script: string,
  gatewayUrl: string,
  secret: string,
): Promise<string[]> {
  const snippet = readMarkdownSnippets("docs/GATEWAY.md").find((s) => s.marker?.includes(testFile));
  if (!snippet) throw new Error(`docs/GATEWAY.md: no block marked as run by ${testFile}`);
  const dir = await mkdtemp(join(tmpdir(), "yiem-example-"));
  await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"));
  await writeFile(join(dir, script), snippet.code);
  const env = { ...process.env, YIEM_GATEWAY: gatewayUrl, YIEM_KEY: secret };
  const { stdout } = await promisify(execFile)("node", [script], {
    cwd: dir,
    env,
    timeout: 60_000,
  });
  return stdout.split("\n");
}
