import {
  type AgentTool,
  type AgentToolResult,
  type PartialResultCallback,
  readSetting,
  type ToolArgs,
} from "@yiem/core";
import { normalizeArgs, readNumber, readString, validatorFrom } from "../toolSupport/args.js";
import { createDeadline, type Deadline, describeFetchError } from "../toolSupport/deadline.js";
import { textResult } from "../toolSupport/results.js";

/** WMO weather interpretation codes, as Open-Meteo documents them. */
const WMO_CODES: Readonly<Record<number, string>> = {
  0: "clear sky",
  1: "mainly clear",
  2: "partly cloudy",
  3: "overcast",
  45: "fog",
  48: "depositing rime fog",
  51: "light drizzle",
  53: "moderate drizzle",
  55: "dense drizzle",
  56: "light freezing drizzle",
  57: "dense freezing drizzle",
  61: "slight rain",
  63: "moderate rain",
  65: "heavy rain",
  66: "light freezing rain",
  67: "heavy freezing rain",
  71: "slight snowfall",
  73: "moderate snowfall",
  75: "heavy snowfall",
  77: "snow grains",
  80: "slight rain showers",
  81: "moderate rain showers",
  82: "violent rain showers",
  85: "slight snow showers",
  86: "heavy snow showers",
  95: "thunderstorm",
  96: "thunderstorm with slight hail",
  99: "thunderstorm with heavy hail",
};

/**
 * Words for a WMO weather code (Open-Meteo's `weather_code`).
 *
 * @example describeWeatherCode(0) // "clear sky"
 * @example describeWeatherCode(42) // "weather code 42"
 */
export function describeWeatherCode(code: number): string {
  return WMO_CODES[code] ?? `weather code ${code}`;
}

/** Where to ask and how long to wait, read from the environment at call time. */
interface WeatherConfig {
  geocodingBaseUrl: string;
  weatherBaseUrl: string;
  timeoutMs: number;
}

/** `http://host/` → `http://host`, so paths can be appended. */
function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/**
 * Reads `YIEM_GEOCODING_BASE_URL`, `YIEM_WEATHER_BASE_URL` and `YIEM_WEATHER_TIMEOUT_MS`
 * through the settings catalogue (a malformed timeout is a `ConfigError` naming it).
 */
function readConfig(): WeatherConfig {
  return {
    geocodingBaseUrl: withoutTrailingSlash(readSetting("geocodingBaseUrl")),
    weatherBaseUrl: withoutTrailingSlash(readSetting("weatherBaseUrl")),
    timeoutMs: readSetting("weatherTimeoutMs"),
  };
}

/** A place to report on. */
interface Place {
  name: string;
  country?: string;
  latitude: number;
  longitude: number;
}

/** The checked arguments: a city, and coordinates when the caller already knows them. */
interface WeatherArgs {
  city: string;
  latitude?: number;
  longitude?: number;
}

/** Reads and checks the arguments; latitude and longitude come together or not at all. */
function parseArgs(args: ToolArgs): WeatherArgs {
  const city = readString(args, "city");
  const latitude = readNumber(args, "latitude", { min: -90, max: 90 });
  const longitude = readNumber(args, "longitude", { min: -180, max: 180 });
  if ((latitude === undefined) !== (longitude === undefined)) {
    throw new Error('invalid arguments: give both "latitude" and "longitude", or neither');
  }
  return { city, latitude, longitude };
}

/** Maps a failed request to the provider's error message: timeout, abort, or unreachable. */
function providerError(
  err: unknown,
  baseUrl: string,
  deadline: Deadline,
  timeoutMs: number,
): Error {
  if (deadline.timedOut()) {
    return new Error(`weather provider at ${baseUrl} timed out after ${timeoutMs} ms`);
  }
  if (deadline.callerAborted()) return new Error("getWeather aborted");
  if (err instanceof SyntaxError)
    return new Error(`weather provider at ${baseUrl} sent invalid JSON`);
  return new Error(`weather provider unreachable at ${baseUrl}: ${describeFetchError(err)}`);
}

/** One GET of a JSON document from the provider; throws the provider's error messages. */
async function getJson(url: URL, baseUrl: string, deadline: Deadline, timeoutMs: number) {
  let response: Response;
  try {
    response = await fetch(url, {
      signal: deadline.signal,
      headers: { accept: "application/json" },
    });
  } catch (err) {
    throw providerError(err, baseUrl, deadline, timeoutMs);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const status = `${response.status} ${response.statusText}`.trim();
    throw new Error(`weather provider at ${baseUrl} answered HTTP ${status}`);
  }
  try {
    return (await response.json()) as unknown;
  } catch (err) {
    throw providerError(err, baseUrl, deadline, timeoutMs);
  }
}

/** A plain object view of an unknown JSON value (empty when it is not an object). */
function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** Resolves a city name to coordinates with Open-Meteo's geocoding API. */
async function geocode(city: string, config: WeatherConfig, deadline: Deadline): Promise<Place> {
  const url = new URL(`${config.geocodingBaseUrl}/v1/search`);
  url.search = new URLSearchParams({
    name: city,
    count: "1",
    language: "en",
    format: "json",
  }).toString();
  const body = asRecord(await getJson(url, config.geocodingBaseUrl, deadline, config.timeoutMs));
  const first = asRecord(Array.isArray(body.results) ? body.results[0] : undefined);
  const { latitude, longitude } = first;
  if (typeof latitude !== "number" || typeof longitude !== "number") {
    throw new Error(`City "${city}" not found: try its English name, or give latitude/longitude`);
  }
  const name = typeof first.name === "string" ? first.name : city;
  const country = typeof first.country === "string" ? first.country : undefined;
  return { name, country, latitude, longitude };
}

/** The current conditions at a place, as Open-Meteo reports them. */
interface Current {
  temperature: number;
  temperatureUnit: string;
  weatherCode: number;
  windSpeed: number;
  windSpeedUnit: string;
  observedAt?: string;
}

/** Fetches `current=temperature_2m,weather_code,wind_speed_10m` for a place. */
async function forecast(place: Place, config: WeatherConfig, deadline: Deadline): Promise<Current> {
  const url = new URL(`${config.weatherBaseUrl}/v1/forecast`);
  url.search = new URLSearchParams({
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: "temperature_2m,weather_code,wind_speed_10m",
  }).toString();
  const body = asRecord(await getJson(url, config.weatherBaseUrl, deadline, config.timeoutMs));
  const current = asRecord(body.current);
  const units = asRecord(body.current_units);
  const { temperature_2m: temperature, weather_code: weatherCode, wind_speed_10m: wind } = current;
  if (
    typeof temperature !== "number" ||
    typeof weatherCode !== "number" ||
    typeof wind !== "number"
  ) {
    throw new Error(`weather provider at ${config.weatherBaseUrl} sent no current weather`);
  }
  return {
    temperature,
    temperatureUnit: typeof units.temperature_2m === "string" ? units.temperature_2m : "°C",
    weatherCode,
    windSpeed: wind,
    windSpeedUnit: typeof units.wind_speed_10m === "string" ? units.wind_speed_10m : "km/h",
    observedAt: typeof current.time === "string" ? current.time : undefined,
  };
}

/** Turns a place and its conditions into the tool's result. */
function toResult(place: Place, now: Current): AgentToolResult {
  const where = place.country ? `${place.name}, ${place.country}` : place.name;
  const condition = describeWeatherCode(now.weatherCode);
  const text =
    `Weather in ${where}: ${condition}, ${now.temperature}${now.temperatureUnit}, ` +
    `wind ${now.windSpeed} ${now.windSpeedUnit}`;
  const details = Object.entries({ ...place, ...now, condition }).filter(
    ([, v]) => v !== undefined,
  );
  return textResult(text, Object.fromEntries(details));
}

/**
 * Lifecycle §17 `prepareArguments`: trims strings and turns numeric strings in `latitude` and
 * `longitude` into numbers.
 */
export function prepareArguments(args: ToolArgs): ToolArgs {
  return normalizeArgs(args, ["latitude", "longitude"]);
}

/**
 * Lifecycle §17 `validateRequiredArgs`: an error text when `city` is missing or blank, a
 * coordinate is out of range, or only one of latitude/longitude is given; else `undefined`.
 */
export const validateRequiredArgs: (args: ToolArgs) => string | undefined =
  validatorFrom(parseArgs);

/**
 * Lifecycle §17 `executeTool`: current weather for `args.city` from Open-Meteo (no API key).
 * Geocodes the city unless `latitude`/`longitude` are given, then reads the forecast's
 * current conditions. Base URLs come from `YIEM_GEOCODING_BASE_URL` / `YIEM_WEATHER_BASE_URL`
 * and the whole call is bounded by `YIEM_WEATHER_TIMEOUT_MS` (default 10000), all read at
 * call time. Reports `{stage}` progress. Throws for an unknown city, an unreachable or
 * failing provider, a timeout, or an abort of `signal`.
 *
 * @example
 * await executeTool("c1", { city: "Tokyo" }, undefined, () => {})
 * // text: "Weather in Tokyo, Japan: clear sky, 22.1°C, wind 5.4 km/h"
 */
export async function executeTool(
  _toolCallId: string,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: PartialResultCallback,
): Promise<AgentToolResult> {
  const parsed = parseArgs(args);
  if (signal?.aborted) throw new Error("getWeather aborted");
  const config = readConfig();
  const deadline = createDeadline(config.timeoutMs, signal);
  try {
    let place: Place;
    if (parsed.latitude !== undefined && parsed.longitude !== undefined) {
      place = { name: parsed.city, latitude: parsed.latitude, longitude: parsed.longitude };
    } else {
      onPartialResult({ stage: "geocoding", city: parsed.city });
      place = await geocode(parsed.city, config, deadline);
    }
    onPartialResult({ stage: "forecast", latitude: place.latitude, longitude: place.longitude });
    return toResult(place, await forecast(place, config, deadline));
  } finally {
    deadline.dispose();
  }
}

/**
 * Lifecycle §17 `getTool`: the `getWeather` tool (parallel-safe, idempotent).
 *
 * @example registerTool(store, getTool())
 */
export function getTool(): AgentTool {
  return {
    name: "getWeather",
    label: "Weather Lookup",
    description:
      "Fetch the current weather (conditions, temperature, wind) for a city from Open-Meteo. " +
      "Give latitude and longitude too when the city name is ambiguous.",
    inputSchema: {
      type: "object",
      properties: {
        city: {
          type: "string",
          minLength: 1,
          description: 'City name in English, e.g. "Tokyo" or "Paris".',
        },
        latitude: {
          type: "number",
          minimum: -90,
          maximum: 90,
          description: "Optional latitude in degrees; with longitude, skips the city lookup.",
        },
        longitude: {
          type: "number",
          minimum: -180,
          maximum: 180,
          description: "Optional longitude in degrees; with latitude, skips the city lookup.",
        },
      },
      required: ["city"],
    },
    execute: executeTool,
    prepareArguments,
    validateRequiredArgs,
    parallelToolExecute: true,
    idempotent: true,
  };
}
