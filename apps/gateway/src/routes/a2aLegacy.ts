import type {
  A2aArtifact,
  A2aMessage,
  A2aPart,
  A2aStatus,
  A2aStreamEvent,
  A2aTaskObject,
} from "./a2aTask.js";

/** The A2A v0.3 JSON-RPC methods the face also answers, and the v1.0 method each one is. */
export const LEGACY_METHODS: Readonly<Record<string, string>> = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/cancel": "CancelTask",
  "tasks/resubscribe": "SubscribeToTask",
  "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
  "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
};

/** A v1.0 task state (`TASK_STATE_INPUT_REQUIRED`) as v0.3 names it (`input-required`). */
function legacyState(state: string): string {
  return state
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, "-");
}

/** A part as v0.3 says it (`kind` first). */
function legacyPart(part: A2aPart) {
  return "text" in part ? { kind: "text", text: part.text } : { kind: "data", data: part.data };
}

function legacyMessage(message: A2aMessage) {
  return {
    kind: "message",
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role === "ROLE_AGENT" ? "agent" : "user",
    parts: message.parts.map(legacyPart),
  };
}

function legacyStatus(status: A2aStatus) {
  return {
    state: legacyState(status.state),
    ...(status.message ? { message: legacyMessage(status.message) } : {}),
    timestamp: status.timestamp,
  };
}

function legacyArtifact(artifact: A2aArtifact) {
  return {
    artifactId: artifact.artifactId,
    name: artifact.name,
    parts: artifact.parts.map(legacyPart),
  };
}

/** A task as v0.3 says it (`kind: "task"`, states such as `input-required`). */
export function legacyTask(task: A2aTaskObject) {
  return {
    kind: "task",
    id: task.id,
    contextId: task.contextId,
    status: legacyStatus(task.status),
    artifacts: task.artifacts.map(legacyArtifact),
    history: task.history.map(legacyMessage),
    metadata: task.metadata,
  };
}

/** The v0.3 states after which a stream ends (`final: true`). */
const FINAL_STATES = new Set(["completed", "failed", "canceled", "rejected", "input-required"]);

/** A stream event as v0.3 says it: the task, a `status-update` (with `final`) or an `artifact-update`. */
export function legacyStreamEvent(event: A2aStreamEvent) {
  if ("task" in event) return legacyTask(event.task);
  if ("statusUpdate" in event) {
    const update = event.statusUpdate;
    const status = legacyStatus(update.status);
    return {
      kind: "status-update",
      taskId: update.taskId,
      contextId: update.contextId,
      status,
      final: FINAL_STATES.has(status.state),
      ...(update.metadata ? { metadata: update.metadata } : {}),
    };
  }
  const update = event.artifactUpdate;
  return {
    kind: "artifact-update",
    taskId: update.taskId,
    contextId: update.contextId,
    artifact: legacyArtifact(update.artifact),
    append: update.append,
    lastChunk: update.lastChunk,
  };
}
