/**
 * What the A2A face tests share: a keyed `fetch` for the SDK's transports, the messages and
 * parts they send, and readers of the stream events and tasks they get back.
 */
import { randomUUID } from "node:crypto";
import type {
  Part,
  SendMessageRequest,
  StreamResponse,
  TaskState,
  TaskStatusUpdateEvent,
} from "@a2a-js/sdk";
import { Role } from "@a2a-js/sdk";
import type { TestKey } from "./support.js";

/**
 * `fetch` with `key` as the bearer token; its answers' bodies end (instead of failing) when
 * their connection is cut, so a stream cut by a SIGKILL just ends.
 */
export function keyedFetch(key: TestKey): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key.secret}`);
    const response = await fetch(input, { ...init, headers });
    const reader = response.body?.getReader();
    if (!reader) return response;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

/** A user message of `parts` (on task `taskId` and context `contextId` when given). */
export function userMessage(
  parts: Part[],
  ids: { taskId?: string; contextId?: string } = {},
): SendMessageRequest {
  return {
    tenant: "",
    configuration: undefined,
    metadata: undefined,
    message: {
      messageId: randomUUID(),
      contextId: ids.contextId ?? "",
      taskId: ids.taskId ?? "",
      role: Role.ROLE_USER,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  };
}

/** A text part. */
export function text(value: string): Part {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" };
}

/** A data part. */
export function data(value: Record<string, unknown>): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" };
}

/** The data parts of a status update's message. */
export function dataOf(event: StreamResponse): Array<Record<string, unknown>> {
  const payload = event.payload;
  if (payload?.$case !== "statusUpdate") return [];
  return (payload.value.status?.message?.parts ?? []).flatMap((part) =>
    part.content?.$case === "data" ? [part.content.value as Record<string, unknown>] : [],
  );
}

/** The text of a status's message. */
export function statusText(task: { status?: { message?: { parts: Part[] } | undefined } }): string {
  return (task.status?.message?.parts ?? [])
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("");
}

/** Every event of `stream`, in order (a stream that fails ends the list). */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch {
    // a cut stream ends the list
  }
  return events;
}

/** The states the stream's status updates (and its first task) went through, in order. */
export function statesOf(events: StreamResponse[]): TaskState[] {
  return events.flatMap((event) => {
    if (event.payload?.$case === "task") return [event.payload.value.status?.state ?? 0];
    if (event.payload?.$case === "statusUpdate") return [event.payload.value.status?.state ?? 0];
    return [];
  });
}

/** The last status update of a stream. */
export function lastStatus(events: StreamResponse[]): TaskStatusUpdateEvent | undefined {
  const updates = events.flatMap((e) =>
    e.payload?.$case === "statusUpdate" ? [e.payload.value] : [],
  );
  return updates.at(-1);
}

/** The task id a stream's first event names. */
export function taskIdOf(events: StreamResponse[]): string {
  const first = events[0]?.payload;
  if (first?.$case !== "task") throw new Error("the stream did not start with its task");
  return first.value.id;
}
