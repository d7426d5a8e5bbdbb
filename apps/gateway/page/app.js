/**
 * The page that shows runs: a key for this tab, an agent, a chat whose answers stream from the
 * session's events, each tool call live (worker, duration, approval), a timeline of the run,
 * the sessions with their usage and the calls awaiting a decision. Everything it shows comes
 * from the gateway's API with the key; the session it shows survives a reload (sessionStorage)
 * and its events replay from the first one, so nothing streamed is lost.
 */
import { callGateway, followSessionEvents, readKey, saveKey } from "./api.js";
import { applyEvent, createSessionView } from "./runView.js";
import { drawTimeline } from "./timeline.js";

const SESSION_ITEM = "yiem.session";
const $ = (id) => document.getElementById(id);

const page = { view: undefined, source: undefined, items: new Map(), timer: undefined };

/** Shows `text` in the status line (as an error when `error`). */
function showStatus(text, error = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", error);
}

async function loadAgents() {
  const { agents } = await callGateway("GET", "/v1/agents");
  const select = $("agent");
  const chosen = select.value;
  select.replaceChildren(
    ...agents.map((agent) => {
      const option = new Option(`${agent.name} (${agent.model})`, agent.name);
      option.selected = agent.name === chosen;
      return option;
    }),
  );
}

async function loadSessions() {
  const { sessions } = await callGateway("GET", "/v1/sessions");
  $("sessions").replaceChildren(...sessions.filter(isWorthListing).map(sessionEntry));
}

/**
 * Whether the list shows a session: not one no coordinator ever took a request of (no agent,
 * nothing used: its only request was refused, or still waits), unless it is the one shown.
 */
function isWorthListing(session) {
  if (session.sessionId === page.view?.sessionId) return true;
  return session.agent !== undefined || session.usage.modelCalls > 0;
}

function sessionEntry(session) {
  const li = document.createElement("li");
  li.dataset.sessionId = session.sessionId;
  li.classList.toggle("current", session.sessionId === page.view?.sessionId);
  const id = span("id", session.sessionId);
  const usage = span(
    "usage",
    `${session.agent ?? "?"} · ${session.usage.totalTokens} tokens · ${session.usage.modelCalls} model, ${session.usage.toolCalls} tool calls` +
      (session.usage.costUsd !== undefined ? ` · $${session.usage.costUsd.toFixed(4)}` : ""),
  );
  li.append(id, usage);
  li.addEventListener("click", () => showSession(session.sessionId));
  return li;
}

async function loadApprovals() {
  const { approvals } = await callGateway("GET", "/v1/approvals");
  $("approvals").replaceChildren(
    ...approvals.map((approval) => {
      const li = document.createElement("li");
      li.dataset.callKey = approval.callKey;
      li.append(
        span("name", `${approval.toolName} `),
        span("meta", `${approval.sessionId.slice(0, 8)}… ${approval.reason}`),
        document.createElement("br"),
        ...decisionButtons(approval.sessionId, approval.callKey),
      );
      return li;
    }),
  );
}

/** The shared provider limits' load (`GET /v1/limits`): shown only when there are any. */
async function loadLimits() {
  const { limits } = await callGateway("GET", "/v1/limits");
  $("limits-title").hidden = limits.length === 0;
  $("limits").hidden = limits.length === 0;
  $("limits").replaceChildren(
    ...limits.map((limit) => {
      const li = document.createElement("li");
      li.dataset.limit = limit.name;
      const used = (n, max, unit) => (max > 0 ? `${n}/${max} ${unit}` : `${n} ${unit}`);
      const window = `per ${limit.windowMs / 1000} s`;
      const paused =
        limit.pausedForMs > 0 ? ` · paused ${Math.ceil(limit.pausedForMs / 1000)} s` : "";
      li.append(
        span("name", `${limit.name} `),
        span(
          "meta",
          `${used(limit.requests, limit.maxRequests, "requests")}, ${used(limit.tokens, limit.maxTokens, "tokens")} ${window}`,
        ),
        document.createElement("br"),
        span("waiting", `${limit.waiting} waiting${paused}`),
      );
      return li;
    }),
  );
}

function decisionButtons(sessionId, callKey) {
  const make = (approved) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = approved ? "approve" : "deny";
    button.textContent = approved ? "Approve" : "Deny";
    button.addEventListener("click", () => decide(sessionId, callKey, approved, button));
    return button;
  };
  return [make(true), make(false)];
}

async function decide(sessionId, toolCallId, approved, button) {
  button.disabled = true;
  try {
    await callGateway("POST", "/v1/approvals", { sessionId, toolCallId, approved });
    showStatus(`${approved ? "approved" : "denied"} ${toolCallId}`);
  } catch (err) {
    showStatus(err.message, true);
    button.disabled = false;
  }
  await loadApprovals().catch(() => undefined);
}

/** Shows session `sessionId`: its events from the first, then live. */
async function showSession(sessionId) {
  page.source?.close();
  page.view = createSessionView(sessionId);
  page.items = new Map();
  $("chat").replaceChildren();
  $("session-id").textContent = sessionId;
  sessionStorage.setItem(SESSION_ITEM, sessionId);
  for (const li of $("sessions").children) {
    li.classList.toggle("current", li.dataset.sessionId === sessionId);
  }
  const view = page.view;
  const source = await followSessionEvents(sessionId, {
    onEvent(event) {
      if (page.view !== view) return;
      applyEvent(view, event);
      if (event.type === "toolApprovalRequested" || event.type === "toolApprovalDecided") {
        loadApprovals().catch(() => undefined);
      }
      if (event.type === "agentEnd") loadSessions().catch(() => undefined);
      scheduleDraw();
    },
    onOpen: () => showStatus(`following ${sessionId}`),
    onError: (err) => showStatus(err.message, true),
  });
  // Another session was chosen meanwhile: this one is not followed.
  if (page.view === view) page.source = source;
  else source.close();
}

let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    drawChanged();
  });
}

function drawChanged() {
  const view = page.view;
  if (!view) return;
  for (const item of view.changed) drawItem(item);
  view.changed.clear();
  const run = view.runs.get(view.lastRunId);
  drawTimeline($("timeline"), view, run, Date.now());
  const chat = $("chat");
  chat.scrollTop = chat.scrollHeight;
}

function drawItem(item) {
  let li = page.items.get(item);
  if (!li) {
    li = document.createElement("li");
    li.className = item.kind;
    page.items.set(item, li);
    $("chat").append(li);
  }
  if (item.kind === "tool") return drawTool(li, item);
  li.textContent = item.text;
  li.classList.toggle("streaming", item.streaming === true);
}

function drawTool(li, tool) {
  li.dataset.toolCallId = tool.id;
  li.dataset.state = tool.state;
  if (tool.workerId) li.dataset.worker = tool.workerId;
  const ms = tool.end !== undefined ? Math.round(tool.end - tool.start) : undefined;
  const parts = [
    span("name", tool.name),
    span("state", ` ${tool.state}`),
    span("meta", tool.workerId ? ` on ${tool.workerId}` : ""),
    span("meta duration", ms !== undefined ? ` in ${ms} ms` : ""),
    span(
      "meta wait",
      tool.waitMs !== undefined ? ` (after ${tool.waitMs} ms awaiting approval)` : "",
    ),
    document.createElement("br"),
    span("args", JSON.stringify(tool.args ?? {})),
  ];
  if (tool.progress !== undefined)
    parts.push(document.createElement("br"), span("meta", JSON.stringify(tool.progress)));
  if (tool.result) parts.push(document.createElement("br"), span("result", tool.result));
  if (tool.decidedBy) parts.push(span("meta", ` (decided by ${tool.decidedBy})`));
  if (tool.state === "awaiting") {
    parts.push(document.createElement("br"), ...decisionButtons(page.view.sessionId, tool.callKey));
  }
  li.replaceChildren(...parts);
}

function span(className, text) {
  const node = document.createElement("span");
  node.className = className;
  node.textContent = text;
  return node;
}

async function send(event) {
  event.preventDefault();
  const input = $("input");
  const text = input.value.trim();
  if (!text) return;
  // The agent picked starts a new session; a continued one answers with its current agent
  // (after a handoff, the one it was handed to).
  const body = { input: text };
  if (page.view) body.sessionId = page.view.sessionId;
  else body.agent = $("agent").value || undefined;
  try {
    const run = await callGateway("POST", "/v1/runs", body);
    input.value = "";
    if (page.view?.sessionId !== run.sessionId) await showSession(run.sessionId);
    loadSessions().catch(() => undefined);
  } catch (err) {
    showStatus(err.message, true);
  }
}

async function abortRun() {
  if (!page.view) return;
  const sessionId = page.view.sessionId;
  const outcome = await callGateway("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/abort`);
  showStatus(outcome.aborted ? `aborted ${outcome.runId}` : "no open run");
}

function newSession() {
  page.source?.close();
  page.source = undefined;
  page.view = undefined;
  sessionStorage.removeItem(SESSION_ITEM);
  $("chat").replaceChildren();
  $("timeline").replaceChildren();
  $("session-id").textContent = "";
}

/** Loads what the key sees, and the session this tab showed before a reload. */
async function start() {
  try {
    await Promise.all([loadAgents(), loadSessions(), loadApprovals(), loadLimits()]);
    showStatus("ready");
    const previous = sessionStorage.getItem(SESSION_ITEM);
    if (previous) await showSession(previous);
  } catch (err) {
    if (err.status === 401 && !readKey()) return askForKey();
    showStatus(err.status === 401 ? `this key was refused: ${err.message}` : err.message, true);
  }
}

/** A gateway with a keys file and no key in this tab yet: asks for one (no error shown). */
function askForKey() {
  showStatus("enter your API key to start (`yiem keys create` makes one)");
  $("key").focus();
}

function wire() {
  $("key").value = readKey();
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    saveKey($("key").value.trim());
    newSession();
    start();
  });
  $("send-form").addEventListener("submit", send);
  $("abort").addEventListener("click", () =>
    abortRun().catch((err) => showStatus(err.message, true)),
  );
  $("new-session").addEventListener("click", newSession);
  // Running bars grow, and the lists stay fresh.
  page.timer = setInterval(() => {
    const run = page.view?.runs.get(page.view.lastRunId);
    if (run && run.end === undefined) drawChanged();
  }, 250);
  setInterval(() => loadApprovals().catch(() => undefined), 5000);
  setInterval(() => loadLimits().catch(() => undefined), 2000);
  start();
}

wire();
