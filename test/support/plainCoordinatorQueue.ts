import { afterAll, beforeAll } from "vitest";
import {
  openPlainCoordinatorQueue,
  type PlainCoordinatorQueue,
} from "./openPlainCoordinatorQueue.js";

export { openPlainCoordinatorQueue, type PlainCoordinatorQueue };

/**
 * Opens the coordinator queue of `cluster` with plain bullmq for the tests of the calling file
 * (in `beforeAll`, after the cluster started) and closes it in `afterAll`. The returned object
 * stands for the open queue; reading it outside a test throws.
 *
 * @example const plain = usePlainCoordinatorQueue(cluster); // then plain.queue.add("ask", data)
 */
export function usePlainCoordinatorQueue(cluster: {
  redis: { url: string; prefix: string };
}): PlainCoordinatorQueue {
  let current: PlainCoordinatorQueue | undefined;
  beforeAll(async () => {
    current = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
  });
  afterAll(async () => {
    await current?.close();
  });
  return new Proxy({} as PlainCoordinatorQueue, {
    get(_target, property) {
      if (!current)
        throw new Error("the plain coordinator queue is not open (used outside a test?)");
      return current[property as keyof PlainCoordinatorQueue];
    },
  });
}
