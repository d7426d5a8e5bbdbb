import { readFileSync } from "node:fs";
import { ConfigError } from "../settings/configError.js";
import type { ModelPrice, PriceTable, RunBudget } from "../types/index.js";

/** Reads one price field: a finite number, 0 or more. */
function readPriceField(where: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`${where} must be a number of dollars per million tokens (0 or more)`);
  }
  return value;
}

function readModelPrice(where: string, value: unknown): ModelPrice {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`${where} must be an object like { "input": 2.5, "output": 10 }`);
  }
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== "input" && key !== "output" && key !== "cachedInput") {
      throw new ConfigError(`${where}.${key} is not a price (input, output, cachedInput)`);
    }
  }
  const price: ModelPrice = {
    input: readPriceField(`${where}.input`, fields.input),
    output: readPriceField(`${where}.output`, fields.output),
  };
  if (fields.cachedInput !== undefined) {
    price.cachedInput = readPriceField(`${where}.cachedInput`, fields.cachedInput);
  }
  return price;
}

/**
 * Checks a parsed price table (`{ "<model>": { input, output, cachedInput? } }`, dollars per
 * million tokens) and returns it; throws `ConfigError` naming `source` and the bad field.
 *
 * @example readPriceTable({ "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 } })
 */
export function readPriceTable(value: unknown, source = "prices"): PriceTable {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`${source} must be a JSON object of prices by model name`);
  }
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(value)) {
    table[model] = readModelPrice(`${source}: ${JSON.stringify(model)}`, price);
  }
  return table;
}

/**
 * Loads the price table of `YIEM_PRICES` (a JSON file's path), checked at start: a file that
 * cannot be read, is not JSON, or has a bad price throws `ConfigError` with the variable, the
 * path and the field. `undefined` when no path is given (no cost is computed).
 *
 * @example const prices = loadPriceTable(config.pricesFile);
 */
export function loadPriceTable(path: string | undefined): PriceTable | undefined {
  if (!path) return undefined;
  const source = `YIEM_PRICES (${path})`;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`${source} cannot be read: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${source} is not JSON: ${(err as Error).message}`);
  }
  return readPriceTable(parsed, source);
}

const BUDGET_KEYS = ["maxTokens", "maxCostUsd", "maxToolCalls", "maxModelCalls"] as const;

/**
 * Reads `YIEM_BUDGET`, a JSON object of run limits (`{ "maxModelCalls": 20, "maxCostUsd": 0.5 }`,
 * see `RunBudget`); `undefined` when unset. Throws `ConfigError` naming the field of a bad one.
 *
 * @example readRunBudget('{"maxTokens": 100000}') // { maxTokens: 100000 }
 */
export function readRunBudget(text: string | undefined): RunBudget | undefined {
  if (!text?.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`YIEM_BUDGET is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`YIEM_BUDGET must be an object like { "maxModelCalls": 20 }`);
  }
  const budget: RunBudget = {};
  for (const [key, value] of Object.entries(parsed)) {
    const known = BUDGET_KEYS.find((k) => k === key);
    if (!known)
      throw new ConfigError(`YIEM_BUDGET.${key} is not a limit (${BUDGET_KEYS.join(", ")})`);
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new ConfigError(`YIEM_BUDGET.${key} must be a number (0 or more)`);
    }
    budget[known] = value;
  }
  return budget;
}
