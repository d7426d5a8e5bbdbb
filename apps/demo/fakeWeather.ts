import { startLocalHttpServer } from "@yiem/testing";

const CITIES: Record<
  string,
  { latitude: number; longitude: number; country: string; temperature: number; code: number }
> = {
  tokyo: { latitude: 35.68, longitude: 139.69, country: "Japan", temperature: 14.2, code: 1 },
  london: {
    latitude: 51.51,
    longitude: -0.13,
    country: "United Kingdom",
    temperature: 7.9,
    code: 61,
  },
  "new york": {
    latitude: 40.71,
    longitude: -74.01,
    country: "United States",
    temperature: 3.4,
    code: 3,
  },
  paris: { latitude: 48.85, longitude: 2.35, country: "France", temperature: 9.1, code: 2 },
  sydney: { latitude: -33.87, longitude: 151.21, country: "Australia", temperature: 22.6, code: 0 },
};

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A local stand-in for Open-Meteo (geocoding and forecast) for the offline demo, with a
 * few hundred milliseconds of latency so parallel calls visibly overlap on the workers.
 * The real `getWeather` tool talks to it over HTTP through YIEM_*_BASE_URL.
 */
export async function startFakeWeather(): Promise<{ url: string; close(): Promise<void> }> {
  return startLocalHttpServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    await sleep(300 + Math.floor(Math.random() * 400));
    res.setHeader("content-type", "application/json");
    if (url.pathname === "/v1/search") {
      const name = (url.searchParams.get("name") ?? "").toLowerCase();
      const city = CITIES[name];
      const results = city
        ? [{ name: name.replace(/\b\w/g, (c) => c.toUpperCase()), ...city }]
        : [];
      res.end(JSON.stringify({ results }));
      return;
    }
    const latitude = Number(url.searchParams.get("latitude"));
    const city = Object.values(CITIES).find((c) => Math.abs(c.latitude - latitude) < 0.01);
    res.end(
      JSON.stringify({
        current: {
          temperature_2m: city?.temperature ?? 20,
          weather_code: city?.code ?? 0,
          wind_speed_10m: 11.5,
        },
        current_units: { temperature_2m: "°C", wind_speed_10m: "km/h" },
      }),
    );
  });
}
