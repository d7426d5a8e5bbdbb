/** Thrown for a setting that cannot be read; its message names the environment variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
