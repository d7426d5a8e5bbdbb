import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * The tracer every Yiem span comes from: a no-op until a tracer provider is registered, then
 * that provider's (the proxy looks it up at each span, so one made now serves both).
 */
const yiemTracer = trace.getTracer("yiem");

/** Options of `inSpan`. */
export interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
  /** The parent (a context extracted from a job); default: the active context. */
  parent?: Context;
}

/**
 * Runs `work` inside a new active span named `name` and ends the span when `work` settles;
 * `work` may add attributes or mark an error outcome (`markSpanError`). A thrown error is
 * recorded and rethrown. With tracing off (no OTEL_* setup) the span is a no-op.
 *
 * @example await inSpan("yiem.llm_call", { attributes: { "yiem.turn": 2 } }, () => llmCall(request))
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = yiemTracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
  );
  // Tracing off: the span records nothing and has no trace to hand on, so no context is made
  // for it (every call and run passes here; a sampled-out span still has its trace id).
  const active = span.isRecording() || isSpanContextValid(span.spanContext());
  try {
    if (!active) return await work(span);
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span as ended in error (a call or run whose outcome is an error result). */
export function markSpanError(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * The active trace context as W3C headers (`traceparent`, `tracestate`), to carry in a job;
 * `undefined` when tracing is off, so jobs carry nothing then.
 */
export function injectTraceContext(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context carried in a job (see `injectTraceContext`); the root context when none. */
export function extractTraceContext(carrier: Record<string, string> | undefined): Context {
  return carrier ? propagation.extract(context.active(), carrier) : context.active();
}

export { SpanKind };
