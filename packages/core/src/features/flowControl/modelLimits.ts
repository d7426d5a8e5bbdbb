import { ConfigError } from "../../settings/configError.js";

/**
 * One shared provider limit: what every coordinator together may send to the models it
 * covers, per window. A limit with neither `requests` nor `tokens` only shares 429 pauses.
 */
export interface ModelLimit {
  /** Requests per window. Default: no request limit. */
  requests?: number;
  /** Tokens (input and output) per window. Default: no token limit. */
  tokens?: number;
  /** The window, in ms. @defaultValue 60 000 (so `requests` is per minute) */
  windowMs?: number;
  /** Tokens reserved per call for its answer, before its usage is known. @defaultValue 0 */
  outputTokens?: number;
  /**
   * The model names it covers. @defaultValue the limit's own name (unless `baseURL` or
   * `apiKeyEnv` says what it covers: then any model)
   */
  models?: string[];
  /**
   * The server it covers: calls to this base URL only (an agent's `baseURL`, else the
   * coordinator's `OPENAI_BASE_URL`), compared without a trailing `/`. Default: any server.
   */
  baseURL?: string;
  /**
   * The key it covers: calls made with the key in this variable only (an agent's `apiKeyEnv`,
   * else `OPENAI_API_KEY`). Names the variable, never the key. Default: any key.
   */
  apiKeyEnv?: string;
}

/** Where a model call goes, as a limit's selectors see it. */
export interface ModelCallTarget {
  model: string;
  /** The server's base URL; `undefined`: the OpenAI SDK's own default. */
  baseURL?: string;
  /** The variable holding the key. @defaultValue `OPENAI_API_KEY` */
  apiKeyEnv?: string;
}

/** The key variable of agents that name none. */
const DEFAULT_KEY_ENV = "OPENAI_API_KEY";

/** Shared provider limits by name (`YIEM_MODEL_LIMITS`): a model's calls wait for their turn. */
export type ModelLimits = Record<string, ModelLimit>;

/** A limit as the coordinator applies it: its name and every field resolved. */
export interface ResolvedModelLimit {
  name: string;
  requests: number;
  tokens: number;
  windowMs: number;
  outputTokens: number;
}

/** The window when a limit names none: a minute, as providers count. */
export const DEFAULT_LIMIT_WINDOW_MS = 60_000;

const FIELDS = new Set([
  "requests",
  "tokens",
  "windowMs",
  "outputTokens",
  "models",
  "baseURL",
  "apiKeyEnv",
]);

/**
 * The limits of `YIEM_MODEL_LIMITS`' JSON, checked: `undefined` when unset. Throws
 * `ConfigError` naming the variable and the field for anything else than an object of limits
 * with positive whole `requests`, `tokens`, `windowMs`, a whole `outputTokens` and a list of
 * model names `models`.
 *
 * @example readModelLimits('{ "gpt-4o-mini": { "requests": 500, "tokens": 200000 } }')
 */
export function readModelLimits(json: string | undefined): ModelLimits | undefined {
  if (json === undefined || json.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new ConfigError(`YIEM_MODEL_LIMITS is not JSON: ${(err as Error).message}`);
  }
  checkModelLimits(value, "YIEM_MODEL_LIMITS");
  return value;
}

/**
 * Checks limits given in code or read from JSON (`readModelLimits`); throws `ConfigError`
 * naming `origin` and the field. Never changes them.
 */
export function checkModelLimits(value: unknown, origin: string): asserts value is ModelLimits {
  if (!isRecord(value)) throw new ConfigError(`${origin} must be an object of limits by name`);
  for (const [name, limit] of Object.entries(value)) {
    const where = `${origin}: limit "${name}"`;
    if (!isRecord(limit)) throw new ConfigError(`${where} must be an object`);
    for (const [field, given] of Object.entries(limit)) {
      if (!FIELDS.has(field)) throw new ConfigError(`${where} has an unknown field "${field}"`);
      if (field === "models") checkModels(given, where);
      else if (field === "baseURL" || field === "apiKeyEnv") checkText(given, `${where}: ${field}`);
      else if (!isWhole(given) || (field !== "outputTokens" && given === 0))
        throw new ConfigError(`${where}: ${field} must be a whole number above 0, got ${given}`);
    }
  }
}

function checkModels(given: unknown, where: string): void {
  const ok = Array.isArray(given) && given.length > 0;
  if (!ok || !given.every((model) => typeof model === "string" && model !== ""))
    throw new ConfigError(`${where}: models must be a list of model names`);
}

function checkText(given: unknown, where: string): void {
  if (typeof given !== "string" || given.trim() === "")
    throw new ConfigError(`${where} must be a non-empty string`);
}

function isWhole(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The limit that covers model `model`: the first whose `models` names it, else the one named
 * after it; `undefined` when none does (its calls are not limited). Same as `limitOfCall` with
 * no server nor key.
 */
export function limitOfModel(
  limits: ModelLimits | undefined,
  model: string,
): ResolvedModelLimit | undefined {
  return limitOfCall(limits, { model });
}

/**
 * The limit that covers calls to `target`: the first, in order, whose selectors all match it
 * (`models` names its model, `baseURL` is its server, `apiKeyEnv` its key's variable), else
 * the one named after its model with no selectors; `undefined` when none covers it.
 *
 * @example
 * limitOfCall({ openai: { baseURL: "https://api.openai.com/v1", tokens: 2e6 } },
 *   { model: "gpt-4o", baseURL: "https://api.openai.com/v1/" })?.name // "openai"
 */
export function limitOfCall(
  limits: ModelLimits | undefined,
  target: ModelCallTarget,
): ResolvedModelLimit | undefined {
  if (!limits) return undefined;
  const entries = Object.entries(limits);
  const found =
    entries.find(([, limit]) => hasSelectors(limit) && selects(limit, target)) ??
    entries.find(([name, limit]) => name === target.model && !hasSelectors(limit));
  if (!found) return undefined;
  const [name, limit] = found;
  return {
    name,
    requests: limit.requests ?? 0,
    tokens: limit.tokens ?? 0,
    windowMs: limit.windowMs ?? DEFAULT_LIMIT_WINDOW_MS,
    outputTokens: limit.outputTokens ?? 0,
  };
}

function hasSelectors(limit: ModelLimit): boolean {
  return limit.models !== undefined || limit.baseURL !== undefined || limit.apiKeyEnv !== undefined;
}

/** Whether every selector `limit` sets matches `target`. */
function selects(limit: ModelLimit, target: ModelCallTarget): boolean {
  if (limit.models && !limit.models.includes(target.model)) return false;
  if (limit.baseURL !== undefined && !sameServer(limit.baseURL, target.baseURL)) return false;
  const keyEnv = target.apiKeyEnv ?? DEFAULT_KEY_ENV;
  return limit.apiKeyEnv === undefined || limit.apiKeyEnv === keyEnv;
}

function sameServer(a: string, b: string | undefined): boolean {
  return b !== undefined && a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
