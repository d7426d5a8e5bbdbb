import { randomUUID } from "node:crypto";
import { connectRedis, type RedisClient, type RunAnswer } from "@yiem/core";
import { ResponseWaits } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finalAnswer } from "../support/messages.js";

/**
 * A coordinator's waits for answers read a stored answer when its run announces it, except
 * for the inputs a run of the same process is answering now: their own announcement, which
 * most often arrives before the reply of the script that made it, reads nothing, and a close
 * that did not answer them reads them once it is done. Checked on a real Redis's responses
 * channel, with the reads counted.
 */

let server: TestRedis;
let redis: RedisClient;
let subscriber: RedisClient;
const channel = () => `${server.prefix}:responses`;

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
  subscriber = connectRedis(server.url);
});

afterAll(async () => {
  await redis.quit();
  await subscriber.quit();
  await server.stop();
});

/** Waits whose reads come from a hash of stored answers, each read input counted. */
async function listeningWaits() {
  const answers = `${server.prefix}:answers:${randomUUID()}`;
  const reads: string[] = [];
  const waits = new ResponseWaits({
    recheckMs: 3_600_000,
    read: async (inputs) => {
      reads.push(...inputs.map((input) => input.requestId));
      const texts = await Promise.all(inputs.map((input) => redis.hget(answers, input.requestId)));
      return texts.map((text) => (text ? (JSON.parse(text) as RunAnswer) : undefined));
    },
  });
  const listener = connectRedis(server.url);
  await waits.listen(listener, channel());
  const store = (id: string) => redis.hset(answers, id, JSON.stringify(answer()));
  return { waits, reads, store, close: () => listener.quit() };
}

const stored = { response: finalAnswer() } as RunAnswer;

function answer(): RunAnswer {
  return stored;
}

describe("waits for answers", () => {
  it("read nothing on the announcement of inputs a run of theirs is answering", async () => {
    const { waits, reads, store, close } = await listeningWaits();
    const ours = waits.wait("ours").promise;
    const other = waits.wait("other").promise;
    const done = waits.answering(["ours"]);
    await store("ours");
    await store("other");
    await redis.publish(channel(), JSON.stringify(["ours", "other"]));
    await other; // the announcement was heard: the other input was read
    waits.settle(["ours"], answer()); // the run's close replied
    done();
    await ours;
    expect(reads).toEqual(["other"]);
    waits.close();
    await close();
  });

  it("read them once the close is done when it did not answer them", async () => {
    const { waits, reads, store, close } = await listeningWaits();
    const ours = waits.wait("ours").promise;
    const marker = waits.wait("marker").promise;
    const done = waits.answering(["ours"]);
    await store("ours"); // answered by another holder
    await store("marker");
    await redis.publish(channel(), JSON.stringify(["ours", "marker"]));
    await marker;
    expect(reads).toEqual(["marker"]);
    done(); // this process's close was refused: the answer is read now
    await expect(ours).resolves.toEqual(stored);
    expect(reads).toEqual(["marker", "ours"]);
    waits.close();
    await close();
  });
});
