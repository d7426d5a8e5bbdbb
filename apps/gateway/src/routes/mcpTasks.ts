import { randomUUID } from "node:crypto";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { CallToolResult, CreateTaskResult, Task } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { AgentEndEvent, RunStatus } from "@yiem/core";
import { toGatewayError } from "../http/dispatch.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import type { RunRecord } from "../state/gatewayStore.js";
import { listMcpTasks, McpTaskCursorError, recordMcpTask } from "../state/mcpTasks.js";
import type { AgentToolArgs } from "./mcpAgentCall.js";
import { abortCancelledRun } from "./mcpCallCancel.js";
import { type CalledRun, endedResult } from "./mcpCallResults.js";
import { awaitedCalls } from "./parkedRun.js";
import { startRun } from "./runs.js";
import { isVisibleSession } from "./sessionAccess.js";

/** How long a task is kept: a run's record is kept a day. */
const TASK_TTL_MS = 24 * 3600 * 1000;

/** How often a client is told to poll `tasks/get` (and `tasks/result` looks). */
const TASK_POLL_MS = 500;

/** How many tasks a page of `tasks/list` holds at most. */
const TASK_PAGE = 20;

/** A run seen by the task face: its record and where it stands. */
interface SeenRun {
  runId: string;
  record: RunRecord;
  status: RunStatus;
}

/**
 * Starts agent `agent`'s run for a task-augmented `tools/call` (as `callAgentTool` does, with
 * the key's identity, agents and runs at once) and answers at once with its task: the run id
 * as the task id, `working`. The run goes on on the cluster; the task is listed among the
 * key's (`tasks/list`) and followed with `tasks/get`, `tasks/result` and `tasks/cancel` on
 * any gateway (`runTaskStore`). A refusal
 * is a JSON-RPC error carrying the gateway's status and code.
 */
export async function createRunTask(
  services: GatewayServices,
  key: GatewayKey,
  agent: string,
  args: AgentToolArgs,
): Promise<CreateTaskResult> {
  try {
    const sessionId = args.sessionId ?? randomUUID();
    const request = { agent, input: args.message, sessionId };
    const run = await startRun(services, key, request, undefined, "newSession");
    await recordMcpTask(services.store, key.name, run.runId);
    const at = new Date(run.createdAt).toISOString();
    const task: Task = {
      taskId: run.runId,
      status: "working",
      statusMessage: `run ${run.runId} of agent ${run.agent}, session ${run.sessionId}`,
      ttl: TASK_TTL_MS,
      pollInterval: TASK_POLL_MS,
      createdAt: at,
      lastUpdatedAt: at,
    };
    return { task };
  } catch (err) {
    const failure = toGatewayError(err, services);
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${failure.status} ${failure.code}: ${failure.message}`,
    );
  }
}

/**
 * The MCP tasks `key` may see, for one request: each is a run of a session the key may see
 * (another key's run is "not found"), its id the run id. Nothing is kept in the gateway:
 * `getTask` derives the status from the run's record and where the cluster says it stands
 * (`runStatus`, the calls awaiting approval): queued or running is `working`, waiting for a
 * decision `input_required`, answered `completed` (`failed` for a run that ended in error,
 * `cancelled` for an aborted one), a failed job `failed`. `getTaskResult` is the call's
 * result as `tools/call` answers it; `updateTaskStatus(…, "cancelled")` is the durable abort.
 * `listTasks` pages the tasks the key made (newest first, a day long: `recordMcpTask` keeps
 * their run ids in Redis), each derived as `getTask` does; another key's are never listed.
 */
export function runTaskStore(services: GatewayServices, key: GatewayKey): TaskStore {
  // The tasks this request cancelled: reported cancelled while their abort lands.
  const cancelled = new Set<string>();
  const seen = async (taskId: string): Promise<SeenRun | undefined> => {
    const record = await services.store.readRun(taskId);
    if (!record || !(await isVisibleSession(services, key, record.sessionId))) return undefined;
    const status = await services.client.runStatus(taskId, { sessionId: record.sessionId });
    return { runId: taskId, record, status };
  };
  return {
    async createTask() {
      throw new McpError(ErrorCode.InternalError, "tasks are made by tools/call only");
    },
    async getTask(taskId) {
      const run = await seen(taskId);
      if (!run) return null;
      const task = await taskOf(services, run);
      if (cancelled.has(taskId) && task.status === "working") {
        return { ...task, status: "cancelled", statusMessage: "cancelled: the run is aborted" };
      }
      return task;
    },
    async storeTaskResult() {
      throw new McpError(ErrorCode.InternalError, "a task's result is its run's answer");
    },
    async getTaskResult(taskId) {
      const run = await seen(taskId);
      if (!run) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      return resultOf(run);
    },
    async updateTaskStatus(taskId, status) {
      const run = await seen(taskId);
      if (!run) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      if (status !== "cancelled") return;
      const ids = { runId: taskId, sessionId: run.record.sessionId };
      services.log.info({ key: key.name, runId: taskId }, "MCP task cancelled");
      if (await abortCancelledRun(services, ids)) cancelled.add(taskId);
    },
    async listTasks(cursor) {
      const page = await readTaskPage(services, key, cursor);
      const runs = await Promise.all(page.runIds.map(seen));
      const visible = runs.filter((run): run is SeenRun => run !== undefined);
      const tasks = await Promise.all(visible.map((run) => taskOf(services, run)));
      return { tasks, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  };
}

/** A page of the key's tasks; a bad cursor is an invalid-params error. */
async function readTaskPage(services: GatewayServices, key: GatewayKey, cursor?: string) {
  try {
    return await listMcpTasks(services.store, key.name, TASK_PAGE, cursor);
  } catch (err) {
    if (err instanceof McpTaskCursorError) throw new McpError(ErrorCode.InvalidParams, err.message);
    throw err;
  }
}

/** The task of a seen run (see `runTaskStore`). */
async function taskOf(services: GatewayServices, run: SeenRun): Promise<Task> {
  const createdAt = new Date(run.record.createdAt ?? Date.now()).toISOString();
  const base = {
    taskId: run.runId,
    ttl: TASK_TTL_MS,
    pollInterval: TASK_POLL_MS,
    createdAt,
    lastUpdatedAt: new Date().toISOString(),
  };
  const { status } = run.status;
  if (status === "completed") {
    const stop = run.status.answer.response.stopReason;
    if (stop === "aborted") return { ...base, status: "cancelled", statusMessage: "aborted" };
    if (stop === "error") return { ...base, status: "failed", statusMessage: "the run failed" };
    return { ...base, status: "completed", statusMessage: `ended: ${stop}` };
  }
  if (status === "failed") return { ...base, status: "failed", statusMessage: run.status.error };
  if (status === "parked") {
    const pending = await awaitedCalls(services, run.record.sessionId);
    if (pending.length > 0) {
      const calls = pending.map((call) => `${call.toolName} (${call.callKey})`).join(", ");
      const statusMessage = `awaiting approval of ${calls} in session ${pending[0]?.sessionId}: decide with POST /v1/approvals`;
      return { ...base, status: "input_required", statusMessage };
    }
  }
  return { ...base, status: "working", statusMessage: status };
}

/** The `tasks/result` of a run that ended: the call's result, as `tools/call` gives it. */
function resultOf(run: SeenRun): CallToolResult {
  const called: CalledRun = {
    runId: run.runId,
    sessionId: run.record.sessionId,
    agent: run.record.agent ?? "",
  };
  if (run.status.status === "failed") {
    const text = `the run failed: ${run.status.error}`;
    return { content: [{ type: "text", text }], isError: true };
  }
  if (run.status.status !== "completed") {
    throw new McpError(ErrorCode.InternalError, `task ${run.runId} has no result yet`);
  }
  const { answer } = run.status;
  const end: AgentEndEvent = {
    type: "agentEnd",
    response: answer.response,
    usage: answer.usage ?? noUsage(),
    ...(answer.response.output !== undefined ? { output: answer.response.output } : {}),
  };
  return endedResult(called, answer.agent ?? called.agent, end);
}

function noUsage(): AgentEndEvent["usage"] {
  const zero = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedInputTokens: 0 };
  return { ...zero, totalTokens: 0, modelCalls: 0, toolCalls: 0 };
}
