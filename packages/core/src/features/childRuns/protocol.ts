import { InvalidCoordinatorJobError } from "../../protocol/errors.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type { AssistantMessage, ExecutedOutcome, RunUsage, StopReason } from "../../types/index.js";

/**
 * The call a child run answers, carried in its coordinator job's data (`parent`): the parent
 * session and the call's key there, the root session of the tree, and the child's depth (1: a
 * child of the root).
 */
export interface ParentCall {
  sessionId: string;
  callKey: string;
  rootSessionId: string;
  depth: number;
  /** The way from the root to this child, root's child first: what its events carry at the root. */
  path?: AgentPathLink[];
  /** The root's run the tree belongs to: whose ledger every node of the tree spends from. */
  rootRunId?: string;
}

/**
 * One step from a tree's root to one of its child runs: the child's agent, its session, and the
 * key of the call in its parent that started it. A child's events, seen at the root, carry the
 * steps from the root down to it (`BusEvent.path`).
 */
export interface AgentPathLink {
  agent: string;
  sessionId: string;
  callKey: string;
}

/** What a child run's answer tells its parent, kept with the call (`details.agentRun`) and in the tree. */
export interface AgentRunDetails {
  agent: string;
  sessionId: string;
  stopReason: StopReason;
  /** The child's usage, its own children's included (the tree under it). */
  usage?: RunUsage;
}

/** One child run of a session, as `yiem tree` and `YiemClient.children` list it. */
export interface ChildRun {
  /** The parent's call that started it. */
  callKey: string;
  agent: string;
  sessionId: string;
  status: "running" | "done" | "error" | "aborted" | "budget";
  /** Epoch ms. */
  startedAt: number;
  endedAt?: number;
  usage?: RunUsage;
}

/** How a child run answers as a call result of its parent. */
export type ChildStatus = ChildRun["status"];

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** A call key: what the model's call id became (1-256 characters). */
const CALL_KEY = /^[^\n]{1,256}$/;

function readString(field: string, value: unknown, pattern: RegExp): string {
  if (typeof value !== "string" || !pattern.test(value))
    throw new InvalidCoordinatorJobError(`parent.${field}`, `must match ${pattern}`);
  return value;
}

/**
 * Reads a job's `parent` (a child run's call): `undefined` when absent. Throws
 * `InvalidCoordinatorJobError` naming the field. A `parent` is only believed when the parent
 * session recorded that call as waiting for exactly this child session (see `ChildRunStore`).
 */
export function readParentCall(value: unknown): ParentCall | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw new InvalidCoordinatorJobError("parent", "must be an object");
  const fields = value as Record<string, unknown>;
  const depth = fields.depth;
  if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1)
    throw new InvalidCoordinatorJobError("parent.depth", "must be a positive integer");
  const path = readPath(fields.path);
  const rootRunId =
    fields.rootRunId === undefined
      ? undefined
      : readString("rootRunId", fields.rootRunId, CALL_KEY);
  return {
    sessionId: readString("sessionId", fields.sessionId, SESSION_ID),
    callKey: readString("callKey", fields.callKey, CALL_KEY),
    rootSessionId: readString("rootSessionId", fields.rootSessionId, SESSION_ID),
    depth,
    ...(path ? { path } : {}),
    ...(rootRunId ? { rootRunId } : {}),
  };
}

const AGENT = /^[A-Za-z0-9_.-]{1,64}$/;

/** Reads a `parent.path`: at most 64 steps of `{ agent, sessionId, callKey }`. */
function readPath(value: unknown): AgentPathLink[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 64)
    throw new InvalidCoordinatorJobError("parent.path", "must be a list of at most 64 steps");
  return value.map((step: unknown, i) => {
    const link = (typeof step === "object" && step !== null ? step : {}) as Record<string, unknown>;
    return {
      agent: readString(`path[${i}].agent`, link.agent, AGENT),
      sessionId: readString(`path[${i}].sessionId`, link.sessionId, SESSION_ID),
      callKey: readString(`path[${i}].callKey`, link.callKey, CALL_KEY),
    };
  });
}

/** The coordinator-queue job id of the child run in session `childSessionId`. */
export function childJobId(childSessionId: string): string {
  return `agent-${childSessionId}`;
}

/** A child's stop reason as its status in the tree. */
export function childStatusOf(stopReason: StopReason): ChildStatus {
  if (stopReason === "aborted" || stopReason === "budget" || stopReason === "error")
    return stopReason;
  return stopReason === "refusal" ? "error" : "done";
}

/** The text of a final answer. */
function textOf(response: AssistantMessage): string {
  return response.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

/** Why a child ended without an answer its parent can use. */
function failureText(agent: string, response: AssistantMessage): string {
  const why = response.errorMessage ?? textOf(response);
  return `agent "${agent}" ended with ${response.stopReason}${why ? `: ${why}` : ""}`;
}

/**
 * The outcome a parent's call gets from its child's answer: the child's structured `output`
 * (as JSON) when it has one, else its text; an error result saying so when the child ended
 * with an error, an abort, a budget stop or a refusal. `details.agentRun` keeps the child's
 * session, stop reason and usage (which the parent's usage adds up).
 */
export function childOutcome(
  agent: string,
  childSessionId: string,
  answer: { response: AssistantMessage; usage?: RunUsage },
): ExecutedOutcome {
  const { response } = answer;
  const agentRun: AgentRunDetails = {
    agent,
    sessionId: childSessionId,
    stopReason: response.stopReason,
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
  if (childStatusOf(response.stopReason) !== "done") {
    const result = createErrorToolResult(failureText(agent, response));
    return { result: { ...result, details: { agentRun } }, isError: true };
  }
  const text = "output" in response ? JSON.stringify(response.output) : textOf(response);
  return { result: { content: [{ type: "text", text }], details: { agentRun } }, isError: false };
}
