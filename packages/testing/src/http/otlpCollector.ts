import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One exported span, as a test needs it. */
export interface CollectedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, string | number | boolean>;
}

/** A trace collector for tests: processes export to `endpoint` with the standard OTEL_* variables. */
export interface OtlpCollector {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpAttribute = { key: string; value: OtlpValue };
type OtlpBody = {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: OtlpAttribute[];
      }>;
    }>;
  }>;
};

function readAttributes(list: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);
  }
  return out;
}

function collect(body: OtlpBody, into: CollectedSpan[]): void {
  for (const resourceSpans of body.resourceSpans ?? []) {
    const service = String(readAttributes(resourceSpans.resource?.attributes)["service.name"]);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        into.push({
          service,
          name: span.name,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          attributes: readAttributes(span.attributes),
        });
      }
    }
  }
}

/**
 * Starts a real OTLP/HTTP (JSON) trace receiver on 127.0.0.1: `POST /v1/traces` bodies are
 * parsed into `spans`. What a real collector would receive from Yiem's processes.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        if (req.url === "/v1/traces")
          collect(JSON.parse(Buffer.concat(chunks).toString("utf8")), spans);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
