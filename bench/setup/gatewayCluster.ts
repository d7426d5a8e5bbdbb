/**
 * The cluster of the `gateway` scenario: the sessions scenario's cluster of compiled processes
 * (`sessionsCluster.ts`: a private `redis-server`, the scripted model, compiled tool workers,
 * a plain BullMQ client of the coordinator queue), one compiled coordinator, and one compiled
 * gateway (`node apps/gateway/dist/main.js`, no keys file: loopback only, every request acts as
 * the local key, which sees every session and has no limits) with the HTTP connection cap
 * raised for the watchers.
 */
import {
  openSessionsCluster,
  type SessionsCluster,
  type SessionsCoordinator,
} from "./sessionsCluster.js";

/** Sizes of the cluster. */
export interface GatewayClusterPlan {
  /** The scripted model's delay before each answer (ms). */
  modelDelayMs: number;
  /** Compiled tool worker processes. */
  workers: number;
  /** `YIEM_COORDINATOR_CONCURRENCY` of the one coordinator. */
  coordinatorConcurrency: number;
  /** `YIEM_HTTP_MAX_CONNECTIONS` of the gateway (the default, 256, is below the watchers). */
  gatewayMaxConnections: number;
}

/** The running cluster. */
export interface GatewayCluster {
  base: SessionsCluster;
  coordinator: SessionsCoordinator;
  /** The gateway's base URL and process. */
  gateway: { url: string; pid: number };
  /** Stops the gateway, then the rest of the cluster. */
  close(): Promise<void>;
}

/** Starts the cluster; whatever started is stopped when a later part fails. */
export async function openGatewayCluster(plan: GatewayClusterPlan): Promise<GatewayCluster> {
  const base = await openSessionsCluster(plan.modelDelayMs, plan.workers);
  base.queue.setMaxListeners(0); // every `waitUntilFinished` in flight listens on it
  try {
    const coordinator = await base.startCoordinator(plan.coordinatorConcurrency);
    const gateway = await base.startGateway({
      YIEM_HTTP_MAX_CONNECTIONS: String(plan.gatewayMaxConnections),
    });
    return {
      base,
      coordinator,
      gateway: { url: gateway.url, pid: gateway.process.pid },
      close: () => base.close(),
    };
  } catch (err) {
    await base.close();
    throw err;
  }
}
