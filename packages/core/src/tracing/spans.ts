import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";
import type { Attributes, Context, Span, SpanContext } from "@opentelemetry/api";

/**
 * Where the OpenTelemetry API (major version 1) keeps what was registered (a tracer provider,
 * a propagator, a context manager): absent until something registers one. While it is absent
 * every API call is a no-op, so Yiem neither loads the API (some 60 files, about 18 ms of a
 * start) nor calls it: tracing off costs nothing.
 */
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1");

let otelApi: typeof OtelApi | undefined;

/**
 * The tracer every Yiem span comes from (once the API is loaded): a proxy that looks the
 * registered provider up at each span, so a provider registered later serves too.
 */
let yiemTracer: OtelApi.Tracer | undefined;

/** The OpenTelemetry API once anything registered with it (see `OTEL_GLOBAL`), else undefined. */
function registeredApi(): typeof OtelApi | undefined {
  if (!(OTEL_GLOBAL in globalThis)) return undefined;
  otelApi ??= createRequire(import.meta.url)("@opentelemetry/api") as typeof OtelApi;
  return otelApi;
}

/** OpenTelemetry's span kinds (its `SpanKind` values), without loading the API. */
export const SpanKind = {
  INTERNAL: 0,
  SERVER: 1,
  CLIENT: 2,
  PRODUCER: 3,
  CONSUMER: 4,
} as const satisfies Record<keyof typeof OtelApi.SpanKind, OtelApi.SpanKind>;

/** OpenTelemetry's `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2 satisfies OtelApi.SpanStatusCode;

/** Options of `inSpan`. */
export interface SpanOptions {
  attributes?: Attributes;
  kind?: OtelApi.SpanKind;
  /** The parent (a context extracted from a job); default: the active context. */
  parent?: Context;
}

/** The span `work` gets while nothing is registered: records nothing, has no trace. */
const NO_SPAN_CONTEXT: SpanContext = {
  traceId: "00000000000000000000000000000000",
  spanId: "0000000000000000",
  traceFlags: 0,
};
const NO_SPAN: Span = {
  spanContext: () => NO_SPAN_CONTEXT,
  setAttribute: () => NO_SPAN,
  setAttributes: () => NO_SPAN,
  addEvent: () => NO_SPAN,
  addLink: () => NO_SPAN,
  addLinks: () => NO_SPAN,
  setStatus: () => NO_SPAN,
  updateName: () => NO_SPAN,
  end: () => undefined,
  isRecording: () => false,
  recordException: () => undefined,
};

/**
 * Runs `work` inside a new active span named `name` and ends the span when `work` settles;
 * `work` may add attributes or mark an error outcome (`markSpanError`). A thrown error is
 * recorded and rethrown. With tracing off (no OTEL_* setup, no tracer registered) the span is a
 * no-op, and the OpenTelemetry API is not even loaded.
 *
 * @example await inSpan("yiem.llm_call", { attributes: { "yiem.turn": 2 } }, () => llmCall(request))
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const api = registeredApi();
  if (!api) return work(NO_SPAN);
  const { context, trace } = api;
  const parent = options.parent ?? context.active();
  yiemTracer ??= trace.getTracer("yiem");
  const kind = options.kind ?? SpanKind.INTERNAL;
  const span = yiemTracer.startSpan(name, { kind, attributes: options.attributes }, parent);
  // Not traced (no provider, only a propagator): the span records nothing and has no trace to
  // hand on, so no context is made for it (a sampled-out span still has its trace id).
  const active = span.isRecording() || api.isSpanContextValid(span.spanContext());
  try {
    if (!active) return await work(span);
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: STATUS_ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span as ended in error (a call or run whose outcome is an error result). */
export function markSpanError(span: Span, message: string): void {
  span.setStatus({ code: STATUS_ERROR, message });
}

/**
 * The active trace context as W3C headers (`traceparent`, `tracestate`), to carry in a job;
 * `undefined` when tracing is off, so jobs carry nothing then.
 */
export function injectTraceContext(): Record<string, string> | undefined {
  const api = registeredApi();
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * The context carried in a job (see `injectTraceContext`); the active one when none, and
 * `undefined` (for `inSpan`: the active one) while nothing is registered.
 */
export function extractTraceContext(
  carrier: Record<string, string> | undefined,
): Context | undefined {
  const api = registeredApi();
  if (!api) return undefined;
  return carrier ? api.propagation.extract(api.context.active(), carrier) : api.context.active();
}
