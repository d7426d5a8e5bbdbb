import { busEventJson } from "../../protocol/busEvent.js";
import { AppendReply } from "../../redis/scriptReplies.js";
import { ScriptedStore } from "../../state/scriptedStore.js";
import {
  guardArg,
  NOT_AS_EXPECTED,
  type NotAsExpected,
  SESSION_TTL_SECONDS,
} from "../../state/sessionStore.js";
import type { AgentHandoffEvent, AgentMessage } from "../../types/index.js";

/** A batch's handoff as it is stored with the batch: the run, and the `agentHandoff` event. */
export interface StoredHandoff {
  runId: string;
  event: AgentHandoffEvent;
}

/**
 * The durable side of handoffs: a batch whose results hand the session over is stored with
 * its handoff in one step, fenced by the holder's lease like every transcript write.
 */
export class HandoffStore extends ScriptedStore {
  /**
   * Appends a batch's results that hand the session over (`handoff.event`: from, to, the
   * call), and in the same step makes `handoff.event.to` the session's agent and publishes the
   * event (see `appendHandoff-5.lua`): all of it or nothing. False when the lease is lost;
   * `NOT_AS_EXPECTED` (nothing written) when `expectLength` is given and the transcript has
   * another length.
   */
  async appendHandoff(
    sessionId: string,
    token: string,
    messages: AgentMessage[],
    handoff: StoredHandoff,
    expectLength?: number,
  ): Promise<boolean | NotAsExpected> {
    const k = this.keys;
    const pairs = messages.flatMap((m) => [
      JSON.stringify(m),
      m.role === "toolResult" ? m.toolCallId : "",
    ]);
    const length = await this.redis.yiemAppendHandoff(
      k.lease(sessionId),
      k.messages(sessionId),
      k.running(sessionId),
      k.sessionAgent(sessionId),
      k.stream(sessionId),
      token,
      guardArg(expectLength),
      handoff.event.to,
      SESSION_TTL_SECONDS,
      k.eventChannel(sessionId),
      busEventJson(handoff.event, { sessionId, runId: handoff.runId }),
      this.caps.maxLength,
      this.caps.maxBytes,
      ...pairs,
    );
    return length === AppendReply.notExpectedLength
      ? NOT_AS_EXPECTED
      : length !== AppendReply.notOurs;
  }
}
