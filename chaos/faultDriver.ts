import { setTimeout as sleep } from "node:timers/promises";
import type { ProcessSlot } from "@yiem/testing";
import type { Random } from "./random.js";
import type { RedisUnderTest } from "./redisUnderTest.js";

/** The faults the driver injects. */
export type FaultKind =
  | "coordinator SIGKILL"
  | "worker SIGKILL"
  | "coordinator SIGSTOP"
  | "worker SIGSTOP"
  | "Redis SIGKILL"
  | "Redis SHUTDOWN NOSAVE"
  | "Redis Cluster master SIGKILL";

/** Faults that kill (a process or Redis), as opposed to stopping one for a while. */
export const KILL_FAULTS: readonly FaultKind[] = [
  "coordinator SIGKILL",
  "worker SIGKILL",
  "Redis SIGKILL",
  "Redis SHUTDOWN NOSAVE",
  "Redis Cluster master SIGKILL",
];

/** One fault the driver injected. */
export interface FaultRecord {
  kind: FaultKind;
  /** The slot it hit (`coordinator-2`), or `redis`. */
  target: string;
  /** Epoch ms. */
  at: number;
  /** How long the target was down or stopped, ms. */
  downMs: number;
}

/** Options of `startFaultDriver`. */
export interface FaultDriverOptions {
  random: Random;
  coordinators: ProcessSlot[];
  workers: ProcessSlot[];
  redis: RedisUnderTest;
  /** Stop once this many kills were done. */
  kills: number;
  /** No fault starts after this (epoch ms). */
  until: number;
  /** The pause between two faults, ms: drawn in [min, max]. */
  gapMs: [number, number];
}

/** What the driver did, and whether it has more to do. */
export interface FaultDriver {
  faults: FaultRecord[];
  /** Kills done so far. */
  kills(): number;
  /** True until the driver has done its kills or run out of time. */
  active(): boolean;
  /** Stops injecting; resolves once every target is back (restarted, resumed). */
  stop(): Promise<void>;
}

type Weighted = { kind: FaultKind; weight: number };

/** How often each fault comes up, relative to the others. */
function faultWeights(redis: RedisUnderTest): Weighted[] {
  return [
    { kind: "coordinator SIGKILL", weight: 3 },
    { kind: "worker SIGKILL", weight: 3 },
    { kind: "coordinator SIGSTOP", weight: 1.5 },
    { kind: "worker SIGSTOP", weight: 1.5 },
    ...(redis.cluster
      ? [{ kind: "Redis Cluster master SIGKILL" as const, weight: redis.canKillMaster() ? 1.5 : 0 }]
      : [
          { kind: "Redis SIGKILL" as const, weight: 0.6 },
          { kind: "Redis SHUTDOWN NOSAVE" as const, weight: 0.4 },
        ]),
  ];
}

function pickFault(random: Random, weights: Weighted[]): FaultKind {
  const total = weights.reduce((sum, w) => sum + w.weight, 0);
  let roll = random.next() * total;
  for (const w of weights) {
    roll -= w.weight;
    if (roll < 0) return w.kind;
  }
  return weights[0]?.kind ?? "worker SIGKILL";
}

/**
 * The seeded fault driver: after a random pause it picks a fault (weighted, from the seed's
 * own stream), injects it with real signals and waits until the target is back: a SIGKILLed
 * process is restarted in its slot after 0–1.5 s, a SIGSTOPped one gets SIGCONT after
 * 0.5–7 s (past its lock and lease now and then, so it comes back as a zombie), Redis is
 * started again on its port and AOF folder after 0.2–2 s, a cluster master's replica takes
 * over. One fault at a time; bounded by `kills` and `until`.
 */
export function startFaultDriver(options: FaultDriverOptions): FaultDriver {
  const { random } = options;
  const faults: FaultRecord[] = [];
  let stopped = false;
  const kills = () => faults.filter((f) => KILL_FAULTS.includes(f.kind)).length;
  const active = () => !stopped && kills() < options.kills && Date.now() < options.until;

  const killProcess = async (slot: ProcessSlot) => {
    slot.signal("SIGKILL");
    await slot.exited();
    const downMs = random.int(0, 1500);
    await sleep(downMs);
    await slot.restart();
    return downMs;
  };
  const stopProcess = async (slot: ProcessSlot) => {
    slot.signal("SIGSTOP");
    const downMs = random.int(500, 7000);
    await sleep(downMs);
    slot.signal("SIGCONT");
    return downMs;
  };
  const inject = async (kind: FaultKind): Promise<FaultRecord> => {
    const at = Date.now();
    const coordinator = () => random.pick(options.coordinators);
    const worker = () => random.pick(options.workers);
    switch (kind) {
      case "coordinator SIGKILL":
      case "worker SIGKILL": {
        const slot = kind === "worker SIGKILL" ? worker() : coordinator();
        return { kind, target: slot.name, at, downMs: await killProcess(slot) };
      }
      case "coordinator SIGSTOP":
      case "worker SIGSTOP": {
        const slot = kind === "worker SIGSTOP" ? worker() : coordinator();
        return { kind, target: slot.name, at, downMs: await stopProcess(slot) };
      }
      case "Redis SIGKILL":
      case "Redis SHUTDOWN NOSAVE": {
        const downMs = random.int(200, 2000);
        await options.redis.restart(
          kind === "Redis SIGKILL" ? "SIGKILL" : "SHUTDOWN NOSAVE",
          downMs,
        );
        return { kind, target: "redis", at, downMs };
      }
      case "Redis Cluster master SIGKILL":
        await options.redis.killMaster();
        return { kind, target: "redis cluster", at, downMs: Date.now() - at };
    }
  };
  const loop = (async () => {
    while (active()) {
      await sleep(random.int(...options.gapMs));
      if (!active()) break;
      faults.push(await inject(pickFault(random, faultWeights(options.redis))));
    }
  })();
  return {
    faults,
    kills,
    active,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
