/**
 * What the face tests (AG-UI, A2A, Open Responses) share: one scripted model that every face
 * drives alike, and a cluster with two gateway processes in front of it, with a keys file.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll } from "vitest";
import { type TestCluster, useTestCluster } from "../support/cluster.js";
import {
  type GatewayProcess,
  startGatewayProcess,
  type TestKey,
  textOf,
  type Wire,
  writeKeysFile,
} from "./support.js";

/**
 * The faces' model: `pair` calls `sleepFor` twice at once (the first the slower); `slow` calls
 * `sleepFor` for 2.5 s; `hold <x>` calls `waitForAbort`; `approve <x>` calls `ledgerApproval`
 * (which waits for a decision); after tool results it answers `done: <results>` in 3 deltas;
 * `recall` answers with the user messages the session holds; a question ending `in <city>?`
 * calls `echoText` with `noon in <city>` (the examples of docs/GATEWAY.md); else `hi <x>` in 4
 * deltas, at once.
 */
export function respondAsFaceModel(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const users = messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
  const [verb = "", arg = "x"] = (users.at(-1) ?? "").split(" ");
  const city = / in (\w+)\?$/.exec(users.at(-1) ?? "")?.[1];
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
    return { kind: "text", text: `done: ${results.join(" | ")}`, textChunks: 3 };
  }
  const call = (id: string, name: string, args: Record<string, unknown>) => ({
    id,
    name,
    arguments: args,
  });
  if (city && messages.at(-1)?.role === "user") {
    const echo = call(`time-${city}`, "echoText", { text: `noon in ${city}` });
    return { kind: "toolCalls", calls: [echo] };
  }
  if (verb === "pair") {
    const calls = [
      call("first", "sleepFor", { ms: 900, label: "first" }),
      call("second", "sleepFor", { ms: 50, label: "second" }),
    ];
    return { kind: "toolCalls", calls };
  }
  if (verb === "slow") {
    return { kind: "toolCalls", calls: [call("nap", "sleepFor", { ms: 2500, label: "nap" })] };
  }
  if (verb === "hold") {
    return { kind: "toolCalls", calls: [call(`hold-${arg}`, "waitForAbort", { label: arg })] };
  }
  if (verb === "approve") {
    return { kind: "toolCalls", calls: [call(`call-${arg}`, "ledgerApproval", { label: arg })] };
  }
  if (verb === "recall") return { kind: "text", text: `heard: ${users.join(", ")}` };
  // At once: a face follows a run it starts before queuing it, so no delta is missed.
  return { kind: "text", text: `hi ${arg}`, textChunks: 4 };
}

/** The faces' cluster: its two gateways and the environment a third one would start with. */
export interface FaceCluster {
  cluster: TestCluster;
  gateway: GatewayProcess;
  otherGateway: GatewayProcess;
  /** The cluster's environment with the keys file: what a gateway of the test starts with. */
  gatewayEnv: Record<string, string>;
}

/**
 * A test cluster (one worker) answering with `respondAsFaceModel`, and two gateway processes
 * in front of it that know `keys`; started before the file's tests, stopped after them. Read
 * the fields inside tests (they are set once `beforeAll` ran).
 */
export function useFaceCluster(keys: TestKey[]): FaceCluster {
  const cluster = useTestCluster({ workers: 1, model: { respond: respondAsFaceModel } });
  const faces = { cluster } as FaceCluster;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), "yiem-faces-"));
    const file = join(dir, "keys.jsonl");
    await writeKeysFile(file, keys);
    faces.gatewayEnv = { ...cluster.env, YIEM_API_KEYS: file };
    [faces.gateway, faces.otherGateway] = await Promise.all([
      startGatewayProcess(faces.gatewayEnv),
      startGatewayProcess(faces.gatewayEnv),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([faces.gateway?.process.stop(3000), faces.otherGateway?.process.stop(3000)]);
  });
  return faces;
}
