import {
  type AgentTool,
  type CoordinatorHandle,
  type CoordinatorOptions,
  createOpenAILlmCall,
  registerTool,
  startCoordinator,
  ToolStore,
  YiemClient,
} from "@yiem/core";
import {
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
  startTestRedis,
  type TestRedis,
} from "@yiem/testing";
import { afterAll, beforeAll } from "vitest";

/** What `useInProcessCoordinator` starts. */
export interface InProcessCoordinatorOptions {
  /** The scripted model's answers. */
  respond: (request: ScriptedRequest) => ScriptedReply;
  /** The tools the coordinator runs in its own process, registered in a `ToolStore` named `storeName`. */
  tools: AgentTool[];
  storeName: string;
  /** A Redis server of this file's own (`startTestRedis`'s `privateServer`). */
  privateRedis?: boolean;
  /** Coordinator options besides `redis`, `prefix`, `llmCall` and `toolStore`. */
  coordinator?: Omit<CoordinatorOptions, "redis" | "prefix" | "llmCall" | "toolStore">;
}

/** A coordinator running in the test's process, its Redis, its scripted model and a client. */
export interface InProcessCoordinator {
  redis: TestRedis;
  model: ScriptedModelServer;
  coordinator: CoordinatorHandle;
  client: YiemClient;
}

/**
 * Starts, for the tests of the calling file (in `beforeAll`), a test Redis, a scripted model
 * answering with `respond`, a coordinator in this process that calls it and runs `tools`,
 * and a `YiemClient`; stops them in `afterAll`. The returned object stands for the running
 * set; reading it outside a test throws.
 *
 * @example const local = useInProcessCoordinator({ respond, tools: [note], storeName: "notes" });
 */
export function useInProcessCoordinator(
  options: InProcessCoordinatorOptions,
): InProcessCoordinator {
  const running: Partial<InProcessCoordinator> = {};
  beforeAll(async () => {
    const redis = await startTestRedis({ privateServer: options.privateRedis });
    running.redis = redis;
    const model = await startScriptedModelServer({ respond: options.respond });
    running.model = model;
    const toolStore = new ToolStore({ name: options.storeName });
    for (const tool of options.tools) registerTool(toolStore, tool);
    running.coordinator = await startCoordinator({
      ...options.coordinator,
      redis: redis.url,
      prefix: redis.prefix,
      llmCall: createOpenAILlmCall({
        model: "scripted-model",
        baseURL: model.baseURL,
        apiKey: "k",
      }),
      toolStore,
    });
    running.client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
  }, 60_000);
  afterAll(async () => {
    await running.client?.close();
    await running.coordinator?.close(1000);
    await running.model?.close();
    await running.redis?.stop();
  });
  return new Proxy({} as InProcessCoordinator, {
    get(_target, property) {
      const part = running[property as keyof InProcessCoordinator];
      if (!part)
        throw new Error("the in-process coordinator is not running (used outside a test?)");
      return part;
    },
  });
}
