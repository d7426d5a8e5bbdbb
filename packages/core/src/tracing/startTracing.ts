import { readSetting, type SettingsSource } from "../settings/readSettings.js";

/** A started tracing setup. */
export interface Tracing {
  /** Exports the spans still buffered, then stops. Never throws. */
  shutdown(): Promise<void>;
}

/** True when the standard OpenTelemetry variables ask for traces to be exported. */
export function isTracingConfigured(env?: SettingsSource): boolean {
  if (readSetting("otelSdkDisabled", env) === "true") return false;
  const exporters = readSetting("otelTracesExporter", env);
  if (exporters !== undefined) return exporters.includes("otlp");
  return Boolean(
    readSetting("otelExporterOtlpEndpoint", env) ||
      readSetting("otelExporterOtlpTracesEndpoint", env),
  );
}

/**
 * Starts exporting this process's spans over OTLP/HTTP when the standard `OTEL_*` variables
 * ask for it (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or
 * `OTEL_TRACES_EXPORTER=otlp`; the exporter reads its endpoint, headers and timeouts from them,
 * the batch processor its delays from `OTEL_BSP_*`). Registers W3C trace-context propagation
 * and an async-hooks context manager. `OTEL_SERVICE_NAME` overrides `serviceName`.
 * Returns `undefined`, and loads none of the SDK, when tracing is not configured: Yiem's
 * spans then stay no-ops.
 *
 * @example const tracing = await startTracing("yiem-coordinator"); // in a process's main
 */
export async function startTracing(serviceName: string): Promise<Tracing | undefined> {
  if (!isTracingConfigured()) return undefined;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      "service.name": readSetting("otelServiceName") ?? serviceName,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return {
    shutdown: () => provider.shutdown().catch(() => undefined),
  };
}
