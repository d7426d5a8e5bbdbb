/** Every Redis key and channel Yiem uses, under one prefix. Keys of a session share a hash tag. */
export function clusterKeys(prefix: string) {
  const session = (sessionId: string) => `${prefix}:s:{${sessionId}}`;
  return {
    prefix,
    /** BullMQ's own key prefix for the queues. */
    bullPrefix: `${prefix}:bull`,
    messages: (sessionId: string) => `${session(sessionId)}:messages`,
    inbox: (sessionId: string) => `${session(sessionId)}:inbox`,
    run: (sessionId: string) => `${session(sessionId)}:run`,
    /** Tool calls running in a coordinator's process right now (call id → start time). */
    running: (sessionId: string) => `${session(sessionId)}:running`,
    lease: (sessionId: string) => `${session(sessionId)}:lease`,
    seq: (sessionId: string) => `${session(sessionId)}:seq`,
    stream: (sessionId: string) => `${session(sessionId)}:events`,
    response: (inputId: string) => `${prefix}:response:${inputId}`,
    eventChannel: (sessionId: string) => `${prefix}:events:${sessionId}`,
    responsesChannel: `${prefix}:responses`,
    controlChannel: `${prefix}:control`,
    workers: `${prefix}:workers`,
    worker: (workerId: string) => `${prefix}:worker:${workerId}`,
  };
}

/** The key set of one prefix. */
export type ClusterKeys = ReturnType<typeof clusterKeys>;

/** The BullMQ queue that coordinators consume. */
export const COORDINATOR_QUEUE = "coordinator";

/** The BullMQ queue name of a tool queue (`tool.queue`, default `default`). */
export function toolQueueName(queue: string | undefined): string {
  return `tools-${queue ?? "default"}`;
}
