import type { SettingParser } from "./parsers.js";

/** The processes of a deployment, each with its own reader of the catalogue (`readSettings`). */
export type ProcessRole = "coordinator" | "worker" | "gateway" | "cli";

/** Every role, for the settings all processes read (Redis, the key namespace). */
export const EVERY_ROLE = ["coordinator", "worker", "gateway", "cli"] as const;

/**
 * One setting of the catalogue: its environment variable, how its text is read, its value
 * when unset, the processes that read it, and one line of documentation. Declared once, in
 * `SETTINGS`; the readers, the resolved options and docs/CONFIGURATION.md all come from it.
 */
export interface SettingDeclaration<
  T = unknown,
  R extends readonly ProcessRole[] = readonly ProcessRole[],
> {
  /** The environment variable. */
  readonly env: string;
  /** How the variable's text becomes the value. */
  readonly parser: SettingParser<NonNullable<T>>;
  /** The value when the variable is unset or blank (`undefined`: none, or see `defaultText`). */
  readonly default: T;
  /** The default in words, when it depends on something else (`1 on a single Redis, 3 on a cluster`). */
  readonly defaultText?: string;
  /** The processes that read it (`readSettings(role)`); the others ignore it. */
  readonly roles: R;
  /** One line: what it does. */
  readonly doc: string;
  /** Never printed (a key or password): the reference says so. */
  readonly secret?: boolean;
}

/** What every declaration says besides its default. */
interface DeclarationFields<T, R extends readonly ProcessRole[]> {
  env: string;
  parser: SettingParser<T>;
  roles: R;
  doc: string;
  defaultText?: string;
  secret?: boolean;
}

/**
 * Declares a setting. With `default`, its value is never `undefined`; without, an unset
 * variable gives `undefined` (none, or a default that depends on something else, which
 * `defaultText` then gives in words). Never reads the environment.
 */
export function setting<T, const R extends readonly ProcessRole[]>(
  fields: DeclarationFields<T, R> & { default: NoInfer<T> },
): SettingDeclaration<T, R>;
export function setting<T, const R extends readonly ProcessRole[]>(
  fields: DeclarationFields<T, R>,
): SettingDeclaration<T | undefined, R>;
export function setting<T, const R extends readonly ProcessRole[]>(
  fields: DeclarationFields<T, R> & { default?: T },
): SettingDeclaration<T | undefined, R> {
  return { ...fields, default: fields.default } as SettingDeclaration<T | undefined, R>;
}
