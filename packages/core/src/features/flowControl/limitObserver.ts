import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** The labels of a provider limit's series: the limit's name, and the call's tenant if any. */
export interface LimitLabels {
  limit: string;
  /** The tenant the call is made for (`LlmCallOptions.tenant`); absent: none. */
  tenant?: string;
}

/**
 * How many tenants one process gives series of their own; the calls of any tenant seen after
 * them are counted under `tenant="other"`, so a flood of tenant names cannot grow `/metrics`
 * without bound.
 */
export const TENANT_SERIES_CAP = 50;

/** The label a call's tenant gets: `""` for none, its name, or `other` past the cap. */
function tenantLabelOf(seen: Set<string>, tenant: string | undefined): string {
  if (tenant === undefined) return "";
  if (seen.has(tenant)) return tenant;
  if (seen.size >= TENANT_SERIES_CAP) return "other";
  seen.add(tenant);
  return tenant;
}

/** Told what the calls under shared provider limits do (`limitLlmCall`): the metrics' feed. */
export interface ProviderLimitObserver {
  /** A call started waiting for its turn (each request of it: a retry waits again). */
  waitStarted(labels: LimitLabels): void;
  /** That wait ended after `seconds`: its turn came, it was aborted, or Redis failed. */
  waitEnded(labels: LimitLabels, seconds: number): void;
  /** The model server answered a request under the limit 429. */
  refused(labels: LimitLabels): void;
  /** A call's answer came: the tokens it counts against the limit (its usage, else its reservation). */
  admitted(labels: LimitLabels, tokens: number): void;
}

/** Wait buckets, in seconds: from a free turn to several windows of a minute. */
const WAIT_BUCKETS = [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Registers the provider limits' series in `registry` and returns their feed, each by `limit`
 * and `tenant` (`""` for calls of no tenant; the first `TENANT_SERIES_CAP` tenants by name,
 * later ones as `other`): `yiem_model_limit_wait_seconds` (histogram: how long each request
 * waited for its turn, 0 when it came at once), `yiem_model_limit_429_total`,
 * `yiem_model_limit_tokens_admitted_total` and `yiem_model_limit_calls_waiting` (requests of
 * this process waiting for their turn now: sum it over coordinators).
 */
export function createProviderLimitSeries(registry: Registry): ProviderLimitObserver {
  const labelNames = ["limit", "tenant"] as const;
  const waits = new Histogram({
    name: "yiem_model_limit_wait_seconds",
    help: "How long model calls waited for their turn under a shared provider limit, by limit and tenant",
    labelNames,
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  const refusals = new Counter({
    name: "yiem_model_limit_429_total",
    help: "Model calls under a shared provider limit that the model server answered 429, by limit and tenant",
    labelNames,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "yiem_model_limit_tokens_admitted_total",
    help: "Tokens of the model calls admitted under a shared provider limit (reported usage, else the reservation), by limit and tenant",
    labelNames,
    registers: [registry],
  });
  const waiting = new Gauge({
    name: "yiem_model_limit_calls_waiting",
    help: "Model calls of this coordinator waiting for their turn under a shared provider limit now, by limit and tenant (sum over coordinators)",
    labelNames,
    registers: [registry],
  });
  const seen = new Set<string>();
  const series = (labels: LimitLabels) => ({
    limit: labels.limit,
    tenant: tenantLabelOf(seen, labels.tenant),
  });
  return {
    waitStarted: (labels) => waiting.inc(series(labels)),
    waitEnded(labels, seconds) {
      waiting.dec(series(labels));
      waits.observe(series(labels), seconds);
    },
    refused: (labels) => refusals.inc(series(labels)),
    // Incremented by 0 too: the series shows from the first call on.
    admitted: (labels, count) => tokens.inc(series(labels), Math.max(0, count)),
  };
}
