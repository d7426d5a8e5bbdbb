import { YiemError } from "../errors/yiemError.js";

/** Thrown for a setting that cannot be read; its message names the environment variable. */
export class ConfigError extends YiemError {
  override name = "ConfigError";
}
