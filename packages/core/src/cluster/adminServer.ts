import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import express, { type NextFunction, type Request, type Response } from "express";
import type { CoordinatorMetrics } from "./metrics.js";

/** Options of `startAdminServer`. */
export interface AdminServerOptions {
  port: number;
  host?: string;
  /** The queues to show (read each time, so queues created later appear). */
  queues: () => Queue[];
  metrics: CoordinatorMetrics;
  /** Extra facts for `/healthz`. */
  health: () => Record<string, unknown>;
  /** Basic auth for Bull Board when both are set. */
  adminUser?: string;
  adminPassword?: string;
  /** Bull Board without retry, remove or clean buttons. */
  readOnly?: boolean;
}

/** A running admin server. */
export interface AdminServerHandle {
  url: string;
  close(): Promise<void>;
}

function basicAuth(user: string, password: string) {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.headers.authorization === expected) return next();
    res.set("WWW-Authenticate", 'Basic realm="yiem"').status(401).send("authentication required");
  };
}

function mountBullBoard(app: express.Express, options: AdminServerOptions): void {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath("/admin/queues");
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: "Yiem" } },
  });
  const shown = new Set<string>();
  const refresh = () => {
    for (const queue of options.queues()) {
      if (shown.has(queue.name)) continue;
      shown.add(queue.name);
      board.addQueue(new BullMQAdapter(queue, { readOnlyMode: options.readOnly === true }));
    }
  };
  const guards =
    options.adminUser && options.adminPassword
      ? [basicAuth(options.adminUser, options.adminPassword)]
      : [];
  app.use(
    "/admin/queues",
    ...guards,
    (_req: Request, _res: Response, next: NextFunction) => {
      refresh();
      next();
    },
    serverAdapter.getRouter(),
  );
}

/**
 * Serves the coordinator's HTTP side: Bull Board at `/admin/queues` (every queue; basic auth
 * when configured), `/healthz` and `/metrics` (Prometheus).
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServerHandle> {
  const app = express();
  app.disable("x-powered-by");
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok", ...options.health() });
  });
  app.get("/metrics", async (_req, res) => {
    await options.metrics.collectQueueDepths(options.queues()).catch(() => undefined);
    res
      .set("Content-Type", options.metrics.registry.contentType)
      .send(await options.metrics.registry.metrics());
  });
  mountBullBoard(app, options);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(options.port, options.host ?? "0.0.0.0", () => resolve(s));
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
