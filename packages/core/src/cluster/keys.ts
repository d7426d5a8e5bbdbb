/** Every Redis key and channel Yiem uses, under one prefix. Keys of a session share a hash tag. */
export function clusterKeys(prefix: string) {
  const session = (sessionId: string) => `${prefix}:s:{${sessionId}}`;
  return {
    prefix,
    /** BullMQ's own key prefix for the queues. */
    bullPrefix: `${prefix}:bull`,
    messages: (sessionId: string) => `${session(sessionId)}:messages`,
    /** Inputs not yet answered: input id → the user message JSON the coordinator encoded. */
    inputs: (sessionId: string) => `${session(sessionId)}:inputs`,
    /** Plain inputs waiting to join a run (a sorted set of ids, by submission order). */
    pendingInputs: (sessionId: string) => `${session(sessionId)}:pendingInputs`,
    /** Follow-ups waiting for a run of their own (a sorted set of ids, by submission order). */
    pendingFollowUps: (sessionId: string) => `${session(sessionId)}:pendingFollowUps`,
    /** The open run (`runId`); absent when the session is idle. */
    run: (sessionId: string) => `${session(sessionId)}:run`,
    /** Ids of the inputs the open run answers, in the order they joined it. */
    runInputs: (sessionId: string) => `${session(sessionId)}:runInputs`,
    /** Tool calls running in a coordinator's process right now (call id → start time). */
    running: (sessionId: string) => `${session(sessionId)}:running`,
    lease: (sessionId: string) => `${session(sessionId)}:lease`,
    /** Calls of the parked batch that need a human decision: call key → request JSON. */
    approvals: (sessionId: string) => `${session(sessionId)}:approvals`,
    /** Decisions taken on them: call key → decision JSON (approved, by, reason, decidedAt). */
    decisions: (sessionId: string) => `${session(sessionId)}:decisions`,
    /** Outcomes of the parked batch's other calls, reused on resume: call key → outcome JSON. */
    parkedResults: (sessionId: string) => `${session(sessionId)}:parkedResults`,
    /** Every call awaiting approval in the cluster: `<sessionId> <callKey>` by request time. */
    approvalsPending: `${prefix}:approvalsPending`,
    /** Calls awaiting approval that have a timeout: `<sessionId> <callKey>` by deadline. */
    approvalDeadlines: `${prefix}:approvalDeadlines`,
    seq: (sessionId: string) => `${session(sessionId)}:seq`,
    stream: (sessionId: string) => `${session(sessionId)}:events`,
    response: (inputId: string) => `${prefix}:response:${inputId}`,
    eventChannel: (sessionId: string) => `${prefix}:events:${sessionId}`,
    responsesChannel: `${prefix}:responses`,
    controlChannel: `${prefix}:control`,
    workers: `${prefix}:workers`,
    worker: (workerId: string) => `${prefix}:worker:${workerId}`,
    /** Set by a tool worker when tool job `jobId` finishes; a retry of the job is then refused. */
    toolDone: (jobId: string) => `${prefix}:toolDone:${jobId}`,
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
