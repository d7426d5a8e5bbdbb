/**
 * @yiem/core: the YiemAgent tool lifecycle in TypeScript.
 * Folders: `types` (messages, tools, events), `tools` (store, loading, validation, the
 * prepare → execute → finalize pipeline, batches), `agent` (loop, queues, the agent class),
 * `llm` (OpenAI-compatible adapter and message formatting), `cluster` (BullMQ, Redis).
 */

export * from "./agent/index.js";
export * from "./clusterExports.js";
export * from "./llm/index.js";
export * from "./sandbox/index.js";
export * from "./tools/index.js";
export * from "./tracing/index.js";
export type * from "./types/index.js";
export * from "./writtenTools/index.js";
