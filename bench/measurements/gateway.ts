/**
 * The gateway scenario (`--only gateway`): one compiled gateway process in front of one
 * compiled coordinator and its tool workers (`setup/gatewayCluster.ts`). First many
 * server-sent-event watchers on it while runs go on (`gatewayStreams.ts`), then runs per second
 * through `POST /v1/runs?wait=true` against plain BullMQ producers (`gatewayRuns.ts`).
 */
import { loadAverage } from "../sampling/environment.js";
import { type GatewayClusterPlan, openGatewayCluster } from "../setup/gatewayCluster.js";
import { type GatewayRuns, type GatewayRunsPlan, measureGatewayRuns } from "./gatewayRuns.js";
import {
  type GatewayStreams,
  type GatewayStreamsPlan,
  measureGatewayStreams,
} from "./gatewayStreams.js";

/** Sizes of the scenario. */
export interface GatewayPlan {
  cluster: GatewayClusterPlan;
  streams: GatewayStreamsPlan;
  runs: GatewayRunsPlan;
}

/** What the gateway scenario measured. */
export interface Gateway {
  plan: GatewayPlan;
  streams: GatewayStreams;
  runs: GatewayRuns;
  /** The machine's load average (1 min) at the start and at the end. */
  loadAverage: { atStart: number; atEnd: number };
  date: string;
  durationS: number;
}

/** Runs the scenario on a cluster of its own, closed whatever happened. */
export async function measureGateway(
  plan: GatewayPlan,
  progress: (text: string) => void,
): Promise<Gateway> {
  const startedAt = performance.now();
  const atStart = loadAverage();
  progress("gateway: starting Redis, the model, a tool worker, a coordinator and a gateway");
  const cluster = await openGatewayCluster(plan.cluster);
  try {
    const streams = await measureGatewayStreams(cluster, plan.streams, progress);
    const runs = await measureGatewayRuns(cluster, plan.runs, progress);
    return {
      plan,
      streams,
      runs,
      loadAverage: { atStart, atEnd: loadAverage() },
      date: new Date().toISOString(),
      durationS: Math.round((performance.now() - startedAt) / 100) / 10,
    };
  } finally {
    await cluster.close();
  }
}
