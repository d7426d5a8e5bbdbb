import type { AgentMessage, BusEvent, RunUsage } from "@yiem/core";
import {
  approvalRequestItem,
  endingOf,
  functionCallItem,
  functionCallOutputItem,
  type OutputItem,
  type ResponseStatus,
  type RunEnding,
  responseIdOf,
  responseUsageOf,
  SEQUENCE_WINDOW,
  terminalEventOf,
  textBaseOf,
  textOfAssistant,
  textSequence,
} from "./responseItems.js";

/** The run a response stands for, as its durable record names it. */
export interface ResponseRun {
  runId: string;
  sessionId: string;
  agent: string;
  /** The number of the session's latest stored event when the run was queued. */
  afterSeq: number;
  /** When the run was submitted (epoch ms). */
  createdAt: number;
}

/** One event of the Responses stream (`response.output_text.delta`…). */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<
  string,
  unknown
>;

/** How a fold reads its events and what it tells. */
export interface FoldOptions {
  /** Tell only the stream events numbered after this (a stream resumed there). */
  startingAfter?: number;
  /**
   * Take the live text of a model call only when it streams after this stored event (read
   * before the events are followed): the text of a call that was streaming already may have
   * begun before the reader joined, so it is sent whole with its `messageEnd`.
   */
  liveAfter?: number;
  /** Told each stream event. */
  emit?: (event: ResponseStreamEvent) => void;
}

/** The assistant message whose text is streaming: its item and where its numbers start. */
interface OpenMessage {
  item: OutputItem;
  part: { type: "output_text"; text: string; annotations: unknown[]; logprobs: unknown[] };
  index: number;
  anchor: number;
}

/**
 * A response built from its run's events, the same on every gateway: `add` each event of the
 * run's session (as `followRun` gives them, stored and live) and it keeps the response's
 * output items (a `message` per model call with text, a `function_call` per call the model
 * asked for, a `function_call_output` per result, an `mcp_approval_request` per call awaiting
 * a decision) and tells `emit` the Responses stream events each makes, numbered from the
 * events' durable numbers (`SEQUENCE_WINDOW`), only those after `startingAfter`: a stream
 * resumed there, replayed from the run's start, sends the rest and nothing twice (a text
 * delta cut by `startingAfter` sends only its unsent characters).
 */
export class ResponseFold {
  /** The response's output items so far, in order. */
  readonly output: OutputItem[] = [];
  /** The response's status so far. */
  status: ResponseStatus = "queued";
  private ending: RunEnding | undefined;
  private usage: RunUsage | undefined;
  private awaiting: unknown;
  private message: OpenMessage | undefined;
  private lastSeq: number;
  private seq = 0;
  private step = 0;
  private readonly startingAfter: number;
  private readonly liveAfter: number;
  private readonly emit: (event: ResponseStreamEvent) => void;

  constructor(
    private readonly run: ResponseRun,
    options: FoldOptions = {},
  ) {
    this.lastSeq = run.afterSeq;
    this.startingAfter = options.startingAfter ?? -1;
    this.liveAfter = options.liveAfter ?? run.afterSeq;
    this.emit = options.emit ?? (() => undefined);
  }

  /** Whether the run's end was seen. */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  /** Sends `response.created` and `response.in_progress` (numbers 0 and 1). */
  begin(): void {
    const response = { ...this.snapshot(), status: "in_progress", output: [] };
    this.send(0, "response.created", { response });
    this.send(1, "response.in_progress", { response });
  }

  /** Adds one event of the run's session (see `isOfRun` for those it skips). */
  add(event: BusEvent): void {
    if (!this.isOfRun(event)) {
      if (!event.live) this.lastSeq = event.seq;
      return;
    }
    if (event.live) {
      const joinedLate = this.lastSeq <= this.liveAfter;
      if (event.type === "messageUpdate" && event.delta !== "" && !joinedLate) {
        this.addDelta(event.delta);
      }
      return;
    }
    this.seq = event.seq;
    this.step = 0;
    if (event.type === "agentStart") this.status = "in_progress";
    else if (event.type === "messageEnd") this.addMessage(event.message);
    else if (event.type === "toolApprovalRequested") this.addItem(approvalRequestItem(event));
    else if (event.type === "agentEnd") this.end(event.response, event.usage);
    this.lastSeq = event.seq;
  }

  /**
   * Ends the stream at a run that waits for a person's decision: status `incomplete`
   * (`awaiting_approval`), `awaiting` as the `yiem` extension, `response.incomplete` numbered
   * last in the window of the last event read (the run's next event comes after it).
   */
  park(awaiting: unknown): void {
    this.status = "incomplete";
    this.awaiting = awaiting;
    const sequence = (this.lastSeq + 1) * SEQUENCE_WINDOW - 1;
    this.send(sequence, "response.incomplete", { response: this.snapshot() });
  }

  /** Ends the stream at a run that failed before it began (the coordinators refused it). */
  fail(code: string, message: string): void {
    this.status = "failed";
    this.ending = { status: "failed", error: { code, message }, incomplete: null };
    const sequence = (this.lastSeq + 1) * SEQUENCE_WINDOW - 1;
    this.send(sequence, "response.failed", { response: this.snapshot() });
  }

  /** Marks the response as waiting for a person's decision, without an event (a snapshot's). */
  markAwaiting(awaiting: unknown): void {
    this.status = "incomplete";
    this.awaiting = awaiting;
  }

  /** The response object as it stands. */
  snapshot() {
    const incomplete = this.awaiting ? { reason: "awaiting_approval" } : this.ending?.incomplete;
    return {
      id: responseIdOf(this.run.runId),
      object: "response" as const,
      created_at: Math.floor(this.run.createdAt / 1000),
      status: this.status,
      model: this.run.agent,
      output: structuredClone(this.output),
      error: this.ending?.error ?? null,
      incomplete_details: incomplete ?? null,
      usage: this.usage ? responseUsageOf(this.usage) : null,
      instructions: null,
      metadata: {},
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      tool_choice: "auto",
      tools: [],
      text: { format: { type: "text" } },
      truncation: "disabled",
      ...(this.awaiting ? { yiem: this.awaiting } : {}),
    };
  }

  /**
   * Whether `event` is the response's: every event of the session's own runs after the run was
   * queued (input sent to a busy session joins the run in progress, which then answers it; a
   * follow-up waits for it), of child runs only their calls awaiting approval, and of the ends
   * only the one that answers the response.
   */
  private isOfRun(event: BusEvent): boolean {
    if (event.path) return event.type === "toolApprovalRequested";
    if (event.type !== "agentEnd") return true;
    return event.runId === this.run.runId || (event.inputIds ?? []).includes(this.run.runId);
  }

  private send(sequence: number, type: string, fields: Record<string, unknown>): void {
    if (sequence > this.startingAfter) this.emit({ type, sequence_number: sequence, ...fields });
  }

  /** The number of the next event a stored event makes. */
  private next(): number {
    return this.seq * SEQUENCE_WINDOW + this.step++;
  }

  private addMessage(message: AgentMessage): void {
    if (message.role === "toolResult") this.addItem(functionCallOutputItem(message));
    if (message.role !== "assistant") return;
    const text = textOfAssistant(message);
    if (text !== "" || this.message) {
      const open = this.message ?? this.openMessage();
      const rest = text.startsWith(open.part.text) ? text.slice(open.part.text.length) : "";
      if (rest !== "") this.addDelta(rest);
      this.closeMessage(open, text);
    }
    for (const block of message.content) {
      if (block.type === "toolCall") this.addItem(functionCallItem(block));
    }
  }

  /** An item whole at once: `output_item.added`, then `output_item.done`. */
  private addItem(item: OutputItem): void {
    const output_index = this.output.length;
    this.output.push(item);
    this.send(this.next(), "response.output_item.added", { output_index, item });
    this.send(this.next(), "response.output_item.done", { output_index, item });
  }

  /** Opens the message whose text streams after the last stored event. */
  private openMessage(): OpenMessage {
    const anchor = this.lastSeq;
    const id = `msg_${this.run.runId.replaceAll("-", "")}_${anchor}`;
    const item: OutputItem = { type: "message", id, status: "in_progress", role: "assistant" };
    const part = { type: "output_text" as const, text: "", annotations: [], logprobs: [] };
    const index = this.output.length;
    const base = textBaseOf(anchor);
    this.send(base - 2, "response.output_item.added", {
      output_index: index,
      item: { ...item, content: [] },
    });
    this.send(base - 1, "response.content_part.added", {
      item_id: id,
      output_index: index,
      content_index: 0,
      part: { ...part },
    });
    item.content = [part];
    this.output.push(item);
    this.message = { item, part, index, anchor };
    return this.message;
  }

  private addDelta(delta: string): void {
    const open = this.message ?? this.openMessage();
    const start = open.part.text.length;
    open.part.text += delta;
    const sequence = textSequence(open.anchor, open.part.text.length);
    if (sequence <= this.startingAfter) return;
    const sent = Math.max(0, this.startingAfter - textSequence(open.anchor, start));
    this.send(sequence, "response.output_text.delta", {
      item_id: open.item.id,
      output_index: open.index,
      content_index: 0,
      delta: delta.slice(sent),
      logprobs: [],
    });
  }

  /**
   * Ends the streaming message with its whole text (`text`, its `messageEnd`'s: the truth when
   * the live text missed some, a subscriber that came back after Redis was away).
   */
  private closeMessage(open: OpenMessage, text = open.part.text): void {
    open.item.status = "completed";
    open.part.text = text || open.part.text;
    const where = { item_id: open.item.id, output_index: open.index, content_index: 0 };
    this.send(this.next(), "response.output_text.done", {
      ...where,
      text: open.part.text,
      logprobs: [],
    });
    this.send(this.next(), "response.content_part.done", { ...where, part: { ...open.part } });
    this.send(this.next(), "response.output_item.done", {
      output_index: open.index,
      item: structuredClone(open.item),
    });
    this.message = undefined;
  }

  private end(response: Parameters<typeof endingOf>[0], usage: RunUsage): void {
    if (this.message) this.closeMessage(this.message);
    this.ending = endingOf(response);
    this.status = this.ending.status;
    this.usage = usage;
    const type = terminalEventOf(this.status);
    this.send(this.next(), type, { response: this.snapshot() });
  }
}
