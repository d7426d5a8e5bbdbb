import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { defineTool } from "@yiem/core";
import humanizeDuration from "humanize-duration";
import { z } from "zod";

/**
 * `waitFor`: waits, then says how long and where (the container's host name). Its own
 * dependency, `humanize-duration`, comes from this project's node_modules (`npm ci` in the
 * image), not from Yiem's.
 */
export default defineTool({
  name: "waitFor",
  description: "Waits the given number of seconds, then says how long it waited and where",
  parameters: z.object({ seconds: z.number().min(0).max(60) }),
  parallelToolExecute: true,
  execute: async ({ seconds }, { signal }) => {
    await sleep(seconds * 1000, undefined, { signal });
    return `waited ${humanizeDuration(seconds * 1000)} on ${hostname()}`;
  },
});
