/**
 * `--only newSession`: what naming a new session costs in Redis commands as the coordinator
 * queue's backlog grows (issue 34: "Creating a run in a new session costs a constant number of
 * Redis commands whatever the backlog"). On a private `redis-server` with no coordinator, so
 * the requests wait: for each backlog size, `YiemClient.hasSession` of a new session id (what
 * the gateway asks before it claims a named session) and `YiemClient.send` to it, counted with
 * `INFO commandstats` (the commands scripts run included) and `INFO stats`.
 */
import { randomUUID } from "node:crypto";
import { YiemClient } from "@yiem/core";
import { startTestRedis } from "@yiem/testing";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { commandstatsPerRun, readCommandstats } from "../sampling/redisCommands.js";

/** The backlogs measured, and the new sessions named at each. */
const BACKLOGS = [0, 100, 2000];
const SAMPLES = 20;

/** One backlog's figures (`backlog`: the requests waiting as it began): Redis commands per new session. */
export interface NewSessionAt {
  backlog: number;
  commandsPerRequest: number;
  hasSessionCommands: number;
}

/** The `newSession` scenario's figures. */
export interface NewSession {
  date: string;
  samples: number;
  at: NewSessionAt[];
}

/** Commands Redis ran for `work`, per sample. */
async function commandsPer(connection: Redis, samples: number, work: () => Promise<unknown>) {
  const before = await readCommandstats(connection);
  for (let i = 0; i < samples; i++) await work();
  return commandstatsPerRun(await readCommandstats(connection), before, samples).perRun;
}

/** Measures the new-session cost at each backlog. */
export async function measureNewSession(progress: (text: string) => void): Promise<NewSession> {
  const redis = await startTestRedis({ privateServer: true });
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue("coordinator", { connection, prefix: `${redis.prefix}:bull` });
  const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
  try {
    await client.send("warm-up"); // opens the client's queue and connection
    const at: NewSessionAt[] = [];
    for (const backlog of BACKLOGS) {
      const missing = backlog - (await queue.getWaitingCount());
      const jobs = Array.from({ length: Math.max(0, missing) }, () => ({
        name: "request",
        data: { input: "queued", sessionId: `other-${randomUUID()}` },
      }));
      if (jobs.length > 0) await queue.addBulk(jobs);
      const waiting = await queue.getWaitingCount();
      progress(`newSession: ${waiting} requests waiting`);
      const hasSessionCommands = await commandsPer(connection, SAMPLES, () =>
        client.hasSession(`new-${randomUUID()}`),
      );
      const commandsPerRequest = await commandsPer(connection, SAMPLES, async () => {
        const sessionId = `new-${randomUUID()}`;
        if (!(await client.hasSession(sessionId))) await client.send("hello", { sessionId });
      });
      at.push({ backlog: waiting, commandsPerRequest, hasSessionCommands });
    }
    return { date: new Date().toISOString(), samples: SAMPLES, at };
  } finally {
    await client.close();
    await queue.close();
    connection.disconnect();
    await redis.stop();
  }
}
