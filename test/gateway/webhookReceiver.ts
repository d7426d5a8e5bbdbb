/**
 * A loopback webhook receiver for the A2A push tests: records each request it gets (method,
 * headers, JSON body) and answers each with `answer` (200 by default; a redirect to test that
 * one is never followed).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

/** One request a receiver got. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/** A running receiver: its port and URL, what it got, and how to stop it. */
export interface WebhookReceiver {
  port: number;
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** What a receiver answers: a status and headers. */
export type WebhookAnswer = { status: number; headers?: Record<string, string> };

/** Starts a receiver on 127.0.0.1 (a free port) answering every request with `answer`. */
export async function startWebhookReceiver(
  answer: WebhookAnswer = { status: 200 },
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = { unparsed: text };
      }
      received.push({ method: req.method ?? "", headers: req.headers, body });
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
