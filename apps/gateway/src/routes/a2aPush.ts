import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { checkPushUrl, PushTargetError } from "../push/pushTarget.js";
import {
  deletePushConfig,
  listPushConfigs,
  MAX_PUSH_CONFIGS,
  type StoredPushConfig,
  savePushConfig,
} from "../state/a2aPushStore.js";
import { A2A_ERRORS, A2aRpcError, expectScope, expectVisibleTask } from "./a2aRun.js";

/** The A2A v1.0 methods of push notification configs. */
export const PUSH_METHODS = new Set([
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
]);

const idText = z.string().min(1).max(200);

/** The params of `CreateTaskPushNotificationConfig`: a `TaskPushNotificationConfig`. */
const createParamsSchema = z.looseObject({
  taskId: idText,
  id: z.string().max(200).optional(),
  url: z.string().min(1).max(2048),
  token: z.string().max(1024).optional(),
  authentication: z
    .looseObject({ scheme: z.string().max(64), credentials: z.string().max(4096) })
    .optional(),
});

/** The params of the other push config methods: the task, and the config (not for a list). */
const configParamsSchema = z.looseObject({ taskId: idText, id: z.string().max(200).optional() });

/** A stored config as A2A says it (`TaskPushNotificationConfig`: without its owner). */
function configOf(stored: StoredPushConfig) {
  const { owner: _owner, ...config } = stored;
  return config;
}

/** `params` checked against `schema`: `InvalidParams` naming the first fault. */
function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  throw new A2aRpcError(A2A_ERRORS.invalidParams, `params: ${where}${issue?.message ?? "invalid"}`);
}

/** The config `id` of `taskId`, else `InvalidParams`. */
async function findConfig(services: GatewayServices, taskId: string, id: string | undefined) {
  const configs = await listPushConfigs(services.store, taskId);
  const found = configs.find((config) => config.id === (id || taskId));
  if (found) return found;
  throw new A2aRpcError(A2A_ERRORS.invalidParams, `task ${taskId} has no push config ${id}`);
}

/** Sets a push config of a task of `key`'s (`submit`), its URL checked against the allowed hosts. */
async function createConfig(services: GatewayServices, key: GatewayKey, params: unknown) {
  const sent = parse(createParamsSchema, params);
  await expectVisibleTask(services, key, sent.taskId);
  expectScope(key, "submit");
  try {
    checkPushUrl(sent.url, services.a2aPushHosts);
  } catch (err) {
    if (!(err instanceof PushTargetError)) throw err;
    services.log.warn({ key: key.name, taskId: sent.taskId, err: err.message }, "push refused");
    throw new A2aRpcError(A2A_ERRORS.invalidParams, err.message);
  }
  const config: StoredPushConfig = {
    id: sent.id || randomUUID(),
    taskId: sent.taskId,
    url: sent.url,
    ...(sent.token ? { token: sent.token } : {}),
    ...(sent.authentication?.scheme ? { authentication: sent.authentication } : {}),
    owner: key.name,
  };
  if ((await savePushConfig(services.store, config)) === "full") {
    const message = `task ${sent.taskId} has ${MAX_PUSH_CONFIGS} push configs already`;
    throw new A2aRpcError(A2A_ERRORS.invalidParams, message);
  }
  return configOf(config);
}

/**
 * Performs one A2A push notification config call of `key` (`PUSH_METHODS`): on a task the key
 * may see (else `TaskNotFoundError`); `Create` and `Delete` need `submit`. The configs are kept
 * in Redis with the task (a day), so any gateway answers and delivers them (`a2aPushDelivery`).
 */
export async function performPushCall(
  services: GatewayServices,
  key: GatewayKey,
  method: string,
  params: unknown,
): Promise<unknown> {
  if (method === "CreateTaskPushNotificationConfig") return createConfig(services, key, params);
  const { taskId, id } = parse(configParamsSchema, params);
  await expectVisibleTask(services, key, taskId);
  if (method === "GetTaskPushNotificationConfig") {
    return configOf(await findConfig(services, taskId, id));
  }
  if (method === "ListTaskPushNotificationConfigs") {
    const configs = await listPushConfigs(services.store, taskId);
    return { configs: configs.map(configOf), nextPageToken: "" };
  }
  expectScope(key, "submit");
  const config = await findConfig(services, taskId, id);
  await deletePushConfig(services.store, taskId, config.id);
  return {};
}

type Loose = Record<string, unknown>;

/** A v1.0 config as v0.3 says it: `{ taskId, pushNotificationConfig: { id, url, … } }`. */
function legacyConfigOf(config: Loose): Loose {
  const { taskId, authentication, ...rest } = config as Loose & { authentication?: Loose };
  const auth = authentication
    ? {
        authentication: {
          schemes: [authentication.scheme],
          credentials: authentication.credentials,
        },
      }
    : {};
  return { taskId, pushNotificationConfig: { ...rest, ...auth } };
}

/**
 * The v1.0 params of a v0.3 push config call (`tasks/pushNotificationConfig/set`, `get`,
 * `list`, `delete`): `set` takes `{ taskId, pushNotificationConfig }` (its `authentication`
 * with `schemes`), the others `{ id: <task>, pushNotificationConfigId? }`.
 */
export function legacyPushParams(method: string, params: unknown): unknown {
  const p = (params ?? {}) as Loose;
  if (method !== "CreateTaskPushNotificationConfig") {
    return { taskId: p.id, id: p.pushNotificationConfigId };
  }
  const config = (p.pushNotificationConfig ?? {}) as Loose & { authentication?: Loose };
  const schemes = config.authentication?.schemes;
  const scheme = Array.isArray(schemes) ? schemes[0] : undefined;
  const auth = scheme
    ? { authentication: { scheme, credentials: config.authentication?.credentials ?? "" } }
    : {};
  return { taskId: p.taskId, id: config.id, url: config.url, token: config.token, ...auth };
}

/** A v1.0 push config call's result as v0.3 says it (a list is an array; a delete `null`). */
export function legacyPushResult(method: string, result: unknown): unknown {
  if (method === "DeleteTaskPushNotificationConfig") return null;
  if (method === "ListTaskPushNotificationConfigs") {
    return ((result as { configs: Loose[] }).configs ?? []).map(legacyConfigOf);
  }
  return legacyConfigOf(result as Loose);
}
