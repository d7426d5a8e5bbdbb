import type { Logger, SettingsOf } from "@yiem/core";

/**
 * Warns at start when `OPENAI_API_KEY` is unset: with `OPENAI_BASE_URL` set it may be fine
 * (local servers need no key), without it every call to the OpenAI API will fail. Logs
 * nothing when a key is set, and never logs the key or the base URL.
 */
export function warnIfNoApiKey(
  config: Pick<SettingsOf<"coordinator">, "openaiApiKey" | "openaiBaseUrl">,
  log: Logger,
): void {
  if (config.openaiApiKey) return;
  if (config.openaiBaseUrl) {
    log.warn(
      "OPENAI_API_KEY is not set: model requests go to OPENAI_BASE_URL without a key " +
        "(fine for a local server that needs none)",
    );
    return;
  }
  log.warn("OPENAI_API_KEY is not set: calls to the OpenAI API will fail until it is");
}
