// A client of a Yiem cluster with nothing but BullMQ: a job on the "coordinator" queue is a
// request, its return value the answer. Each question after the first continues the session.
//
//   node examples/cluster-plain-bullmq/client.mjs "What time is it in Tokyo?" "And in Lima?"
//
// Reads REDIS_URL (default redis://127.0.0.1:6379) and YIEM_PREFIX (default yiem), as the
// cluster does. Exits 1 when a request fails, after closing its connections either way.
import { Queue, QueueEvents } from "bullmq";

const url = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const connection = {
  host: url.hostname,
  port: Number(url.port || 6379),
  username: decodeURIComponent(url.username) || undefined,
  password: decodeURIComponent(url.password) || undefined,
};
const prefix = `${process.env.YIEM_PREFIX ?? "yiem"}:bull`;
const questions = process.argv.length > 2 ? process.argv.slice(2) : ["What time is it in Tokyo?"];

const queue = new Queue("coordinator", { connection, prefix });
const events = new QueueEvents("coordinator", { connection, prefix });
// Finished requests stay an hour (a day when failed), for Bull Board and waitUntilFinished.
const retention = { removeOnComplete: { age: 3600 }, removeOnFail: { age: 24 * 3600 } };

/**
 * Asks one question (in `sessionId`'s session when given) and waits for its answer.
 * @param {string} input
 * @param {string | undefined} sessionId
 * @returns {Promise<{ sessionId: string, text: string }>}
 */
async function ask(input, sessionId) {
  const job = await queue.add("ask", { input, ...(sessionId ? { sessionId } : {}) }, retention);
  const answer = await job.waitUntilFinished(events);
  /** @type {Array<{ type: string, text?: string }>} */
  const content = answer.response.content;
  const text = content.map((block) => block.text ?? "").join("");
  return { sessionId: answer.sessionId, text };
}

try {
  /** @type {string | undefined} */
  let sessionId;
  for (const question of questions) {
    const answer = await ask(question, sessionId);
    sessionId = answer.sessionId;
    console.log(`> ${question}\n${answer.text}`);
  }
  console.log(`session ${sessionId}`);
} catch (err) {
  // A bad request fails its job (`invalid request: …`); a model or tool error is an answer.
  console.error(`request failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await events.close();
  await queue.close();
}
