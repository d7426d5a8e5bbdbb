/** The value of the sample `series` (`name{labels}` as exposed) in a Prometheus text scrape. */
export function sampleOf(metrics: string, series: string): number | undefined {
  const line = metrics.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Fetches `url` (a `/metrics` endpoint) and returns the scrape's text. */
export async function scrape(url: string, timeoutMs = 10_000): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.text();
}

/** Scrapes `url` until `series` has `value` (or `timeoutMs` passes: then throws with the last value). */
export async function waitForSample(
  url: string,
  series: string,
  value: number,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: number | undefined;
  while (Date.now() < deadline) {
    last = sampleOf(await scrape(url), series);
    if (last === value) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${series} is ${last}, not ${value}, after ${timeoutMs} ms`);
}
