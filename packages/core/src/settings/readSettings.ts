import { SETTINGS, type SettingName, type SettingValue } from "./catalogue.js";
import type { ProcessRole } from "./setting.js";

/** Where settings are read from: an environment (`process.env` unless given). */
export type SettingsSource = Readonly<Record<string, string | undefined>>;

/** Every setting's value (`SETTINGS`' keys). */
export type Settings = { -readonly [K in SettingName]: SettingValue<K> };

/** The names of the settings role `R` reads (each setting's `roles`). */
export type SettingNameOf<R extends ProcessRole> = {
  [K in SettingName]: R extends (typeof SETTINGS)[K]["roles"][number] ? K : never;
}[SettingName];

/** The settings of one role, as `readSettings(role)` returns them. */
export type SettingsOf<R extends ProcessRole> = Pick<Settings, SettingNameOf<R>>;

/**
 * This process's environment: the one place Yiem's code takes `process.env` (a check of
 * `npm run lint` keeps it so). For the catalogue's readers, and for what names variables at
 * run time (an MCP file's `${VAR}`, an agent's `apiKeyEnv`) or hands the environment on.
 */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}

/** The setting's value as the environment gives it, `undefined` when unset or blank. */
export function readGivenSetting<K extends SettingName>(
  name: K,
  env: SettingsSource = processEnv(),
): SettingValue<K> | undefined {
  const declaration = SETTINGS[name];
  const raw = env[declaration.env]?.trim();
  if (!raw) return undefined;
  return declaration.parser.parse(raw, declaration.env) as SettingValue<K> | undefined;
}

/**
 * The setting's value: the environment's, else its default. Throws `ConfigError` naming the
 * variable when its text is malformed.
 *
 * @example readSetting("leaseMs", { YIEM_LEASE_MS: "5000" }) // 5000
 */
export function readSetting<K extends SettingName>(
  name: K,
  env: SettingsSource = processEnv(),
): SettingValue<K> {
  return readGivenSetting(name, env) ?? defaultOf(name);
}

/**
 * The value a library function uses: `option` when given, else the environment's, else the
 * default (the precedence of docs/CONFIGURATION.md). For the few functions that read the
 * environment on their own (`createOpenAILlmCall`'s key, `isWriteToolAllowed`, …).
 */
export function settingOr<K extends SettingName>(
  name: K,
  option: SettingValue<K> | undefined,
  env: SettingsSource = processEnv(),
): SettingValue<K> {
  return option ?? readSetting(name, env);
}

/** The setting's default (a copy of a list, so callers may change it). */
export function defaultOf<K extends SettingName>(name: K): SettingValue<K> {
  const value = SETTINGS[name].default as SettingValue<K>;
  return (Array.isArray(value) ? [...value] : value) as SettingValue<K>;
}

/** Reads the named settings; throws `ConfigError` for the first malformed one. */
export function readSettingsNamed<K extends SettingName>(
  names: readonly K[],
  env: SettingsSource = processEnv(),
): Pick<Settings, K> {
  const values: Partial<Settings> = {};
  for (const name of names) (values as Record<K, unknown>)[name] = readSetting(name, env);
  return values as Pick<Settings, K>;
}

/** The names of the settings `role` reads, in the catalogue's order. */
export function settingNamesOf<R extends ProcessRole>(role: R): SettingNameOf<R>[] {
  return (Object.keys(SETTINGS) as SettingName[]).filter((name) =>
    (SETTINGS[name].roles as readonly ProcessRole[]).includes(role),
  ) as SettingNameOf<R>[];
}

/**
 * The settings of a coordinator, a worker, the gateway or the CLI, read once at its start:
 * each from its environment variable, else its default (docs/CONFIGURATION.md lists them).
 * Throws `ConfigError` naming the variable when one is malformed, so a bad value fails the
 * start. Reads nothing but `env`.
 *
 * @example const settings = readSettings("worker"); // settings.workerConcurrency === 16 by default
 */
export function readSettings<R extends ProcessRole>(
  role: R,
  env: SettingsSource = processEnv(),
): SettingsOf<R> {
  return readSettingsNamed(settingNamesOf(role), env) as SettingsOf<R>;
}
