import type { ToolArgs } from "../types/index.js";

/**
 * A call waiting outside its run, as recorded when its run parked: a call awaiting a person's
 * decision (approvals), or an `agent__<name>` call waiting for its child run (`child` set).
 */
export interface WaitingCallRecord {
  /** The call's key in its session (what `approve` / `deny` name). */
  callKey: string;
  toolCallId: string;
  toolName: string;
  arguments: ToolArgs;
  reason: string;
  runId: string;
  /** Epoch ms. */
  requestedAt: number;
  /** Epoch ms when it is denied on its own, if it has a timeout. */
  deadline?: number;
  /**
   * Set when the call waits for a child run instead (an `agent__<name>` call): the agent and
   * the child's session. Such a call is not listed as awaiting approval and takes no decision
   * but its child's answer (`ChildRunStore`).
   */
  child?: { agent: string; sessionId: string };
}
