import type { LlmRequest } from "@yiem/core";
import {
  type ScriptedModelOptions,
  type ScriptedModelServer,
  startScriptedModelServer,
} from "@yiem/testing";
import { afterEach } from "vitest";

const servers: ScriptedModelServer[] = [];

/** Starts a scripted server that is closed after the current test. */
export async function scriptedServer(options: ScriptedModelOptions = {}) {
  const server = await startScriptedModelServer(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A minimal request with one user message and one tool. */
export const request: LlmRequest = {
  messages: [{ role: "user", content: "What is the weather in Paris and Tokyo?" }],
  tools: [
    {
      type: "function",
      function: {
        name: "getWeather",
        description: "Current weather of a city",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    },
  ],
};

/** Retry settings that keep failure tests fast. */
export const fastRetries = { initialRetryDelayMs: 5, maxRetryDelayMs: 20 };
