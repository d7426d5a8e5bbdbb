import { AGENT_NAME } from "../agents/defineAgent.js";
import { describeBadBudget } from "../features/budgets/protocol.js";
import { type ParentCall, readParentCall } from "../features/childRuns/protocol.js";
import {
  InvalidUserInputError,
  toUserMessage,
  type UserInputLimits,
} from "../loop/toUserMessage.js";
import type {
  AssistantMessage,
  RunBudget,
  RunUsage,
  UserInput,
  UserMessage,
} from "../types/index.js";
import { InvalidCoordinatorJobError } from "./errors.js";

/**
 * The data of a coordinator-queue job: one request. Any BullMQ client may add it, under any
 * job name. `input` is a string or a user message (`{ role: "user", content }`, content a
 * string or text / image / image_url parts). Without `sessionId` the job starts a new session
 * with a random id (`state/requestSessions.ts`), returned in `CoordinatorJobResult`.
 * With `followUp: true` the input gets its own run after the current one instead of joining it.
 * `agent` names the agent that answers; a session belongs to the agent that started it, or
 * to the last one it was handed off to, and a request naming another agent is refused. Without
 * `agent` the request goes to the session's current agent (`default` for a new session). `budget` lowers, never raises, the agent's budget for the run that answers
 * the input (a run answering several inputs keeps the lowest limit of each).
 *
 * @example await queue.add("ask", { agent: "support", input: "What time is it in Lima?", sessionId: "s-42", budget: { maxModelCalls: 3 } })
 */
export interface CoordinatorJobData {
  agent?: string;
  input: UserInput;
  sessionId?: string;
  followUp?: boolean;
  /** This request's own limits: they lower the run's budget, never raise it. */
  budget?: RunBudget;
  /**
   * The tenant the session's runs are made for (a gateway sets its key's owner): provider
   * limits serve tenants fairly, and a tenant's budget per day applies (`YIEM_TENANTS`). A
   * child run is its root's tenant's. Absent: the session keeps the tenant it had, if any.
   */
  tenant?: string;
  /** A child run's call (set by the coordinator that starts it; see `ParentCall`). */
  parent?: ParentCall;
}

/**
 * Everything a coordinator-queue job may carry: a request. A job with a `decision` field is
 * refused there: decisions travel on the decisions queue (`DecisionJobData`, see
 * `coordinatorDecision.ts`), which only the approver role may write.
 */
export type CoordinatorQueueJobData = CoordinatorJobData;

/**
 * What a run answered an input with: its response, and what the whole run used (absent for
 * an answer stored by a version of Yiem that did not count it).
 */
export interface RunAnswer {
  response: AssistantMessage;
  usage?: RunUsage;
  /** The agent that gave the response (a handoff may have changed it during the run); absent from older versions. */
  agent?: string;
}

/**
 * The text a run's answer is stored as (each answered input's `response` key): one form,
 * whatever order `answer`'s fields were set in, so a writer and a checker agree on it.
 *
 * @example runAnswerText({ response, usage }) // '{"response":{…},"usage":{…}}'
 */
export function runAnswerText(answer: RunAnswer): string {
  return JSON.stringify({ response: answer.response, usage: answer.usage, agent: answer.agent });
}

/**
 * The return value of a coordinator-queue job: the assistant message that answered its input,
 * and the usage of the run that answered it (tokens, model and tool calls, `costUsd` with a
 * price table).
 *
 * @example { sessionId: "s-42", requestId: "7", runId: "7", response: { role: "assistant", … }, usage: { inputTokens: 812, outputTokens: 64, … } }
 */
export interface CoordinatorJobResult extends RunAnswer {
  sessionId: string;
  /**
   * The request's id: its job's id, the id `send` returns, `waitForResponse` takes and
   * `agentEnd`'s `inputIds` list. Absent from older coordinators' results (read `runId`).
   */
  requestId?: string;
  /**
   * The same id as `requestId`, under its older name: an alias kept so that no client breaks.
   * (An event's `runId` is another thing: the run, which may answer several requests.)
   */
  runId: string;
  /**
   * The agent that answered: the session's agent, or the one a handoff during the run gave it
   * to. Absent from older coordinators' results.
   */
  agent?: string;
  /**
   * The run's structured output (`response.output`): present when the coordinator has an
   * `outputSchema` and the final answer matched it.
   */
  output?: unknown;
}

/**
 * The return value of the job of request `requestId`: its id (as `requestId` and, its older
 * name, `runId`), the agent that answered (the answer's own `agent` when it names one, as
 * after a handoff, else `agent`), the answer (response and usage), and its structured output
 * on top when it has one.
 *
 * @example buildCoordinatorJobResult("s-1", "r-1", "default", answer) // { sessionId, requestId, runId, agent, response, usage, output? }
 */
export function buildCoordinatorJobResult(
  sessionId: string,
  requestId: string,
  agent: string,
  answer: RunAnswer,
): CoordinatorJobResult {
  const result: CoordinatorJobResult = {
    sessionId,
    requestId,
    runId: requestId,
    ...answer,
    agent: answer.agent ?? agent,
  };
  if ("output" in answer.response) result.output = answer.response.output;
  return result;
}

/** How an input enters its session: joining the current run, or a run of its own after it. */
export type InputKind = "input" | "followUp";

/** A validated request: what the coordinator records for the session. */
export interface CoordinatorRequest {
  /** The agent named; `undefined`: the session's current agent (`default` for a new session). */
  agent: string | undefined;
  sessionId: string | undefined;
  kind: InputKind;
  message: UserMessage;
  /** The request's own budget, when it has one: it lowers the run's. */
  budget: RunBudget | undefined;
  /** The tenant named (`CoordinatorJobData.tenant`), when one is. */
  tenant?: string;
  /** The parent's call, when this request starts a child run. */
  parent?: ParentCall;
}

/** Session ids are part of Redis key names (inside a hash tag): a plain, bounded alphabet. */
const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

function readSessionId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !SESSION_ID.test(value)) {
    throw new InvalidCoordinatorJobError(
      "sessionId",
      "must be 1-128 characters of letters, digits, '_', '.', ':' or '-'",
    );
  }
  return value;
}

function readAgent(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !AGENT_NAME.test(value)) {
    throw new InvalidCoordinatorJobError(
      "agent",
      "must be 1-64 characters of letters, digits, '_', '.' or '-'",
    );
  }
  return value;
}

function readFollowUp(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean")
    throw new InvalidCoordinatorJobError("followUp", "must be a boolean");
  return value;
}

/** Tenants are part of Redis key names (inside a hash tag): no braces, no white space. */
const TENANT = /^[^\s{}]{1,128}$/u;

function readTenant(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !TENANT.test(value))
    throw new InvalidCoordinatorJobError(
      "tenant",
      "must be 1-128 characters, without white space or braces",
    );
  return value;
}

function readBudget(value: unknown): RunBudget | undefined {
  if (value === undefined || value === null) return undefined;
  const bad = describeBadBudget(value);
  if (bad) throw new InvalidCoordinatorJobError(`budget${bad.at}`, bad.problem);
  return { ...(value as RunBudget) };
}

/**
 * Reads a coordinator job's data as a request: validates every field, and re-encodes the
 * input as a user message with only the fields Yiem knows. Throws
 * `InvalidCoordinatorJobError` naming the field (`input`, `input.content[0].text`, `agent`,
 * `sessionId`, `followUp`, `budget.maxTokens`, `tenant`…); never trusts anything the job carries as transcript.
 *
 * @example readCoordinatorJob({ input: "hi" }) // { agent: undefined, sessionId: undefined, kind: "input", message, budget: undefined }
 */
export function readCoordinatorJob(
  data: unknown,
  limits: UserInputLimits = {},
): CoordinatorRequest {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new InvalidCoordinatorJobError(
      "data",
      "must be an object like { input, agent?, sessionId?, followUp?, budget? }",
    );
  }
  const fields = data as Record<string, unknown>;
  if (fields.input === undefined) throw new InvalidCoordinatorJobError("input", "is required");
  const agent = readAgent(fields.agent);
  const sessionId = readSessionId(fields.sessionId);
  const kind: InputKind = readFollowUp(fields.followUp) ? "followUp" : "input";
  const budget = readBudget(fields.budget);
  const parent = readParentCall(fields.parent);
  const tenant = readTenant(fields.tenant);
  try {
    const message = toUserMessage(fields.input, limits, "input");
    return {
      agent,
      sessionId,
      kind,
      message,
      budget,
      ...(tenant !== undefined ? { tenant } : {}),
      ...(parent ? { parent } : {}),
    };
  } catch (err) {
    if (err instanceof InvalidUserInputError) {
      throw new InvalidCoordinatorJobError(err.field, err.message.slice(err.field.length + 2));
    }
    throw err;
  }
}
