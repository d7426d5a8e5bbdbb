import type { ClusterKeys, RedisClient } from "@yiem/core";
import type { ResultWaiter } from "@yiem/core/internal";
import { Queue } from "bullmq";

/**
 * The `queueFor` a coordinator hands its remote executor, for tests that drive
 * `createRemoteExecutor` themselves: each call opens the session's tool queue on `command` and
 * has `waiter` listen to its jobs' ends. Every queue it opens is pushed to `opened`, for the
 * test to close.
 */
export function listeningQueueFor(
  command: RedisClient,
  keys: ClusterKeys,
  waiter: ResultWaiter,
  opened: Array<{ close(): Promise<unknown> }>,
) {
  return async (queue: string | undefined, sessionId: string): Promise<Queue> => {
    const made = new Queue(keys.toolQueueFor(queue, sessionId), {
      connection: command,
      prefix: keys.bullPrefix,
    });
    opened.push(made);
    await waiter.listen(made);
    return made;
  };
}
