import type { IncomingMessage, ServerResponse } from "node:http";
import { type LocalHttpServer, startLocalHttpServer } from "@yiem/testing";
import { describeWeatherCode } from "@yiem/tools";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { builtinTool } from "./builtinTool.js";

const { executeTool, prepareArguments, validateRequiredArgs } = builtinTool("getWeather");

const noProgress = (): void => {};

/** Sends a JSON body with a status. */
function sendJson(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The query of a request, as an object. */
function queryOf(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(new URL(req.url ?? "/", "http://local").searchParams);
}

/** A fake of Open-Meteo's geocoding API that knows Tokyo only. */
function fakeGeocoding(seen: Array<Record<string, string>>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const query = queryOf(req);
    seen.push({ path: new URL(req.url ?? "/", "http://local").pathname, ...query });
    if (query.name !== "Tokyo") return sendJson(res, { generationtime_ms: 0.1 });
    sendJson(res, {
      results: [{ name: "Tokyo", country: "Japan", latitude: 35.6895, longitude: 139.69171 }],
    });
  };
}

/** A fake of Open-Meteo's forecast API: clear sky, 22.1 °C, wind 5.4 km/h everywhere. */
function fakeForecast(seen: Array<Record<string, string>>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ path: new URL(req.url ?? "/", "http://local").pathname, ...queryOf(req) });
    sendJson(res, {
      current_units: { temperature_2m: "°C", wind_speed_10m: "km/h" },
      current: {
        time: "2026-11-30T14:00",
        temperature_2m: 22.1,
        weather_code: 0,
        wind_speed_10m: 5.4,
      },
    });
  };
}

const servers: LocalHttpServer[] = [];

/** Starts a server that is closed after the test. */
async function serve(handler: Parameters<typeof startLocalHttpServer>[0]) {
  const server = await startLocalHttpServer(handler);
  servers.push(server);
  return server;
}

/** Points the tool at the given fake servers through its environment variables. */
function useProvider(geocoding: LocalHttpServer, weather: LocalHttpServer): void {
  vi.stubEnv("YIEM_GEOCODING_BASE_URL", geocoding.url);
  vi.stubEnv("YIEM_WEATHER_BASE_URL", weather.url);
}

/** A URL where nothing listens: a server started and closed again. */
async function closedPortUrl(): Promise<string> {
  const server = await startLocalHttpServer((_req, res) => res.end());
  await server.close();
  return server.url;
}

describe("getWeather against a local fake Open-Meteo (lifecycle §17 tool-file contract)", () => {
  let geocodingSeen: Array<Record<string, string>>;
  let forecastSeen: Array<Record<string, string>>;

  beforeEach(() => {
    geocodingSeen = [];
    forecastSeen = [];
  });

  afterEach(async () => {
    vi.unstubAllEnvs();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it("getWeather geocodes the city, reads the forecast and reports it in words", async () => {
    useProvider(await serve(fakeGeocoding(geocodingSeen)), await serve(fakeForecast(forecastSeen)));
    const progress: unknown[] = [];
    const result = await executeTool("call-1", { city: "Tokyo" }, undefined, (p) =>
      progress.push(p),
    );

    expect(result.content).toEqual([
      { type: "text", text: "Weather in Tokyo, Japan: clear sky, 22.1°C, wind 5.4 km/h" },
    ]);
    expect(result.details).toMatchObject({
      name: "Tokyo",
      country: "Japan",
      latitude: 35.6895,
      longitude: 139.69171,
      temperature: 22.1,
      weatherCode: 0,
      condition: "clear sky",
      windSpeed: 5.4,
    });
    expect(geocodingSeen).toEqual([
      { path: "/v1/search", name: "Tokyo", count: "1", language: "en", format: "json" },
    ]);
    expect(forecastSeen).toEqual([
      {
        path: "/v1/forecast",
        latitude: "35.6895",
        longitude: "139.69171",
        current: "temperature_2m,weather_code,wind_speed_10m",
      },
    ]);
    expect(progress).toEqual([
      { stage: "geocoding", city: "Tokyo" },
      { stage: "forecast", latitude: 35.6895, longitude: 139.69171 },
    ]);
  });

  it("getWeather skips geocoding when latitude and longitude are given", async () => {
    useProvider(await serve(fakeGeocoding(geocodingSeen)), await serve(fakeForecast(forecastSeen)));
    const args = prepareArguments({ city: " Somewhere ", latitude: "48.85", longitude: 2.35 });
    expect(validateRequiredArgs(args)).toBeUndefined();
    const result = await executeTool("call-1", args, undefined, noProgress);
    expect((result.content[0] as { text: string }).text).toMatch(
      /^Weather in Somewhere: clear sky/,
    );
    expect(geocodingSeen).toEqual([]);
    expect(forecastSeen[0]).toMatchObject({ latitude: "48.85", longitude: "2.35" });
  });

  it("getWeather reports a city the geocoder does not know", async () => {
    useProvider(await serve(fakeGeocoding(geocodingSeen)), await serve(fakeForecast(forecastSeen)));
    await expect(
      executeTool("call-1", { city: "Atlantis" }, undefined, noProgress),
    ).rejects.toThrow(/^City "Atlantis" not found/);
    expect(forecastSeen).toEqual([]);
  });

  it("getWeather reports an unreachable provider with its base URL", async () => {
    const deadUrl = await closedPortUrl();
    vi.stubEnv("YIEM_GEOCODING_BASE_URL", deadUrl);
    await expect(executeTool("call-1", { city: "Tokyo" }, undefined, noProgress)).rejects.toThrow(
      `weather provider unreachable at ${deadUrl}: connect ECONNREFUSED`,
    );
  });

  it("getWeather reports a non-200 answer of the forecast API", async () => {
    const failing = await serve((_req, res) => sendJson(res, { error: true, reason: "boom" }, 503));
    useProvider(await serve(fakeGeocoding(geocodingSeen)), failing);
    await expect(executeTool("call-1", { city: "Tokyo" }, undefined, noProgress)).rejects.toThrow(
      `weather provider at ${failing.url} answered HTTP 503 Service Unavailable`,
    );
  });

  it("getWeather times out on a provider that never answers (YIEM_WEATHER_TIMEOUT_MS)", async () => {
    const silent = await serve(() => {});
    useProvider(silent, silent);
    vi.stubEnv("YIEM_WEATHER_TIMEOUT_MS", "150");
    const started = Date.now();
    await expect(executeTool("call-1", { city: "Tokyo" }, undefined, noProgress)).rejects.toThrow(
      `weather provider at ${silent.url} timed out after 150 ms`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("getWeather stops when the call's signal aborts", async () => {
    const silent = await serve(() => {});
    useProvider(silent, silent);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(
      executeTool("call-1", { city: "Tokyo" }, controller.signal, noProgress),
    ).rejects.toThrow("getWeather aborted");
  });

  it("getWeather validateRequiredArgs names what is wrong", () => {
    expect(validateRequiredArgs({})).toMatch(/"city" must be a non-empty string/);
    expect(validateRequiredArgs({ city: "Paris", latitude: 48.85 })).toMatch(/both "latitude"/);
    expect(validateRequiredArgs({ city: "Paris", latitude: 91, longitude: 0 })).toMatch(
      /"latitude" must be a number from -90 to 90/,
    );
  });

  it("maps WMO weather codes to words", () => {
    expect(describeWeatherCode(3)).toBe("overcast");
    expect(describeWeatherCode(95)).toBe("thunderstorm");
    expect(describeWeatherCode(42)).toBe("weather code 42");
  });
});
