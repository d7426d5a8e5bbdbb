/**
 * What the page knows of one session, built from its events alone (a replay from the first
 * event and the live ones after it give the same view): the chat items in order (user and
 * assistant messages, tool calls with their worker, duration and approval), and per run the
 * model calls and tool calls the timeline draws.
 */

/** A new, empty view of `sessionId`. */
export function createSessionView(sessionId) {
  return {
    sessionId,
    items: [], // { kind: "user" | "assistant" | "tool" | "note", ... } in the order they came
    tools: new Map(), // toolCallId -> its tool item
    runs: new Map(), // runId -> { runId, start, end?, modelCalls: [], toolIds: [], usage? }
    lastRunId: undefined,
    streaming: undefined, // the assistant item text is streaming into
    changed: new Set(), // items to redraw
  };
}

/** Applies one event (`BusEvent` JSON) to `view`. */
export function applyEvent(view, event) {
  const run = runOf(view, event);
  const handler = HANDLERS[event.type];
  if (handler) handler(view, event, run);
}

const HANDLERS = {
  agentStart(_view, event, run) {
    run.start ??= event.ts;
    run.agent = event.agent;
  },
  turnStart(_view, event, run) {
    run.modelCalls.push({ start: event.ts, turn: event.turn, path: pathOf(event) });
  },
  messageUpdate(view, event) {
    const item = view.streaming ?? addItem(view, { kind: "assistant", text: "", streaming: true });
    view.streaming = item;
    item.text += event.delta;
    view.changed.add(item);
  },
  messageEnd(view, event, run) {
    const message = event.message ?? {};
    if (message.role === "user") addItem(view, { kind: "user", text: textOf(message.content) });
    if (message.role !== "assistant") return;
    const open = run.modelCalls.findLast((call) => call.end === undefined);
    if (open) open.end = event.ts;
    const text = textOf(message.content);
    const item = view.streaming;
    view.streaming = undefined;
    if (item) {
      item.text = text; // the whole message: text streamed before a reload is not lost
      item.streaming = false;
      view.changed.add(item);
    } else if (text) addItem(view, { kind: "assistant", text, streaming: false });
  },
  toolApprovalRequested(view, event, run) {
    const tool = toolOf(view, event, run);
    Object.assign(tool, { state: "awaiting", callKey: event.callKey, reason: event.reason });
  },
  toolApprovalDecided(view, event, run) {
    const tool = toolOf(view, event, run);
    tool.state = event.approved ? "approved" : "denied";
    tool.decidedBy = event.by;
    // Its duration counts from here, when it runs; the wait for a decision is shown apart.
    if (tool.start !== undefined) tool.waitMs = Math.max(0, Math.round(event.ts - tool.start));
    tool.start = event.ts;
  },
  toolExecStart(view, event, run) {
    const tool = toolOf(view, event, run);
    if (tool.state === "denied") return;
    Object.assign(tool, { state: "running", start: event.ts });
  },
  toolExecUpdate(view, event, run) {
    const tool = toolOf(view, event, run);
    tool.progress = event.partialResult;
    if (event.workerId) tool.workerId = event.workerId;
  },
  toolExecEnd(view, event, run) {
    const tool = toolOf(view, event, run);
    tool.end = event.ts;
    tool.start ??= event.ts;
    if (event.workerId) tool.workerId = event.workerId;
    if (tool.state !== "denied") tool.state = event.isError ? "error" : "done";
    tool.result = textOf(event.result?.content);
  },
  agentEnd(view, event, run) {
    run.end = event.ts;
    run.usage = event.usage;
    view.streaming = undefined;
  },
  agentHandoff(view, event) {
    addItem(view, { kind: "note", text: `handed off from ${event.from} to ${event.to}` });
  },
};

/** The run of `event` (made on its first event). */
function runOf(view, event) {
  let run = view.runs.get(event.runId);
  if (!run) {
    run = { runId: event.runId, start: event.ts, modelCalls: [], toolIds: [] };
    view.runs.set(event.runId, run);
    view.lastRunId = event.runId;
  }
  return run;
}

/** The tool item of the event's call, made (in call order) on its first event. */
function toolOf(view, event, run) {
  let tool = view.tools.get(event.toolCallId);
  if (!tool) {
    tool = addItem(view, {
      kind: "tool",
      id: event.toolCallId,
      name: event.toolName,
      args: event.arguments,
      runId: event.runId,
      order: run.toolIds.length,
      path: pathOf(event),
      state: "queued",
    });
    view.tools.set(event.toolCallId, tool);
    run.toolIds.push(event.toolCallId);
  }
  view.changed.add(tool);
  return tool;
}

function addItem(view, item) {
  view.items.push(item);
  view.changed.add(item);
  return item;
}

/**
 * The path of an event of a child run (the agents that called it, outermost first), as an
 * array; `[]` for the session's own run. Events carry it as `path` when agents call agents.
 */
export function pathOf(event) {
  const path = event.path;
  if (Array.isArray(path)) return path.map(String);
  if (typeof path === "string" && path) return path.split("/");
  return [];
}

/** The text of message content: a string, or the text of its text parts. */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part?.type === "text")
    .map((part) => part.text)
    .join("");
}
