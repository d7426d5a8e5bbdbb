import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { textChunks, toolCallChunks } from "./chunks.js";
import {
  estimateTokens,
  outputText,
  promptTokens,
  type ResponseContext,
  textCompletion,
  toolCallsCompletion,
  wireToolCalls,
} from "./completions.js";
import { readBody, sendError, sendJson, sendSse, waitOrClose } from "./http.js";
import { ScriptedRateLimiter } from "./rateLimiter.js";
import type {
  ChatCompletionRequestBody,
  ScriptedModelOptions,
  ScriptedModelServer,
  ScriptedReply,
  ScriptedRequest,
} from "./types.js";

export type {
  ChatCompletionRequestBody,
  ScriptedModelOptions,
  ScriptedModelServer,
  ScriptedRateLimits,
  ScriptedReply,
  ScriptedRequest,
  ScriptedToolCall,
  ScriptedUsage,
} from "./types.js";

/** The state one server works on. */
interface ScriptState {
  replies: ScriptedReply[];
  requests: ScriptedRequest[];
  limited: ScriptedRequest[];
  limiter?: ScriptedRateLimiter;
  options: ScriptedModelOptions;
  model: string;
}

/**
 * Starts a real HTTP server that speaks the OpenAI Chat Completions protocol from a script,
 * plain JSON or streamed (SSE, with the usage chunk when `stream_options.include_usage`).
 *
 * `POST /v1/chat/completions` takes the next reply of `replies`, else asks `respond`, else
 * answers 500 `scripted model: script exhausted`. `GET /v1/models` lists the model. Every
 * request is recorded in `requests`. `close()` ends every connection, hanging ones included.
 *
 * @example
 * const server = await startScriptedModelServer({ replies: [{ kind: "text", text: "hi" }] });
 * const llmCall = createOpenAILlmCall({ model: "m", baseURL: server.baseURL });
 * // ...
 * await server.close();
 */
export async function startScriptedModelServer(
  options: ScriptedModelOptions = {},
): Promise<ScriptedModelServer> {
  const state: ScriptState = {
    replies: [...(options.replies ?? [])],
    requests: [],
    limited: [],
    ...(options.limits ? { limiter: new ScriptedRateLimiter(options.limits) } : {}),
    options,
    model: options.model ?? "scripted-model",
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(state, req, res).catch((err: unknown) => sendError(res, 500, String(err)));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    baseURL: `http://${urlHost}:${port}/v1`,
    requests: state.requests,
    limited: state.limited,
    push: (...replies) => void state.replies.push(...replies),
    close: () => closeServer(server, sockets),
  };
}

/** Stops listening and destroys every open socket; safe to call more than once. */
function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
}

async function handle(state: ScriptState, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  if (req.method === "GET" && path.endsWith("/models")) return listModels(state, res);
  if (req.method === "POST" && path.endsWith("/chat/completions")) {
    return chatCompletion(state, req, res);
  }
  sendError(res, 404, `scripted model: no route for ${req.method} ${path}`);
}

function listModels(state: ScriptState, res: ServerResponse) {
  const created = Math.floor(Date.now() / 1000);
  const data = [{ id: state.model, object: "model", created, owned_by: "scripted" }];
  sendJson(res, 200, { object: "list", data });
}

async function chatCompletion(state: ScriptState, req: IncomingMessage, res: ServerResponse) {
  const body = parseBody(await readBody(req));
  if (!body) return sendError(res, 400, "scripted model: the request body is not a JSON object");
  const index = state.requests.length;
  const request: ScriptedRequest = { body, headers: req.headers, index, receivedAt: Date.now() };
  state.requests.push(request);
  const countToolTokens = state.options.countToolTokens === true;
  const admitted = state.limiter?.take(promptTokens(body, countToolTokens));
  if (admitted && "retryAfterMs" in admitted) return refuse(state, request, admitted, res);
  if (admitted) request.limitedTokens = admitted.entry.tokens;
  const reply = await nextReply(state, request);
  if (!reply) return sendError(res, 500, "scripted model: script exhausted");
  const ctx: ResponseContext = {
    id: `chatcmpl-scripted-${request.index}`,
    model: state.model,
    requestIndex: request.index,
    body,
    countToolTokens,
  };
  if (admitted) {
    admitted.entry.tokens += completionTokens(ctx, reply);
    request.limitedTokens = admitted.entry.tokens;
  }
  await sendReply(ctx, reply, res);
}

/** Answers a request past the limits 429, as a provider does. */
function refuse(
  state: ScriptState,
  request: ScriptedRequest,
  refusal: { retryAfterMs: number },
  res: ServerResponse,
) {
  state.limited.push(request);
  sendError(res, 429, "scripted model: rate limit reached", {
    "retry-after": String(Math.ceil(refusal.retryAfterMs / 1000)),
    "retry-after-ms": String(refusal.retryAfterMs),
  });
}

/** The completion tokens a reply counts against the limits (its usage's, else an estimate). */
function completionTokens(ctx: ResponseContext, reply: ScriptedReply): number {
  if (reply.kind !== "text" && reply.kind !== "toolCalls") return 0;
  const given = reply.usage?.completion_tokens;
  if (typeof given === "number") return given;
  const calls = reply.kind === "toolCalls" ? wireToolCalls(ctx, reply.calls) : [];
  return estimateTokens(outputText(reply, calls));
}

function parseBody(text: string): ChatCompletionRequestBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
    return isObject ? (value as ChatCompletionRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

async function nextReply(state: ScriptState, request: ScriptedRequest) {
  const scripted = state.replies.shift();
  if (scripted) return scripted;
  return state.options.respond ? await state.options.respond(request) : undefined;
}

async function sendReply(ctx: ResponseContext, reply: ScriptedReply, res: ServerResponse) {
  switch (reply.kind) {
    case "hang":
      return; // the response stays open until the client leaves or the server closes
    case "httpError":
      return sendHttpError(reply, res);
    case "malformed":
      return sendMalformed(reply.body, res);
    case "recorded":
      return sendRecorded(reply.body, res);
    case "text":
    case "toolCalls": {
      if (reply.delayMs) await waitOrClose(res, reply.delayMs);
      const stream = ctx.body.stream === true;
      if (reply.kind === "text") {
        return stream
          ? sendSse(res, textChunks(ctx, reply), reply.chunkDelayMs)
          : sendJson(res, 200, textCompletion(ctx, reply));
      }
      return stream
        ? sendSse(res, toolCallChunks(ctx, reply))
        : sendJson(res, 200, toolCallsCompletion(ctx, reply));
    }
  }
}

function sendHttpError(reply: Extract<ScriptedReply, { kind: "httpError" }>, res: ServerResponse) {
  const headers: Record<string, string> = {};
  if (reply.retryAfterSeconds !== undefined)
    headers["retry-after"] = String(reply.retryAfterSeconds);
  sendError(res, reply.status, reply.message, headers);
}

function sendMalformed(body: string, res: ServerResponse) {
  if (res.destroyed) return;
  const sse = body.trimStart().startsWith("data:");
  res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
  res.end(body);
}

/** Replays a recorded body; SSE goes out one event (up to its blank line) per write. */
async function sendRecorded(body: string, res: ServerResponse) {
  if (res.destroyed) return;
  const sse = /^(data|event):/.test(body.trimStart());
  res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
  if (!sse) return void res.end(body);
  for (const event of body.split(/(?<=\n\n)/)) {
    if (res.destroyed) return;
    res.write(event);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}
