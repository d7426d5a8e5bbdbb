import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * The labels of a provider limit's series: the limit's name. A later `tenant` label goes here
 * too, so every series of a limit gains it at once.
 */
export interface LimitLabels {
  limit: string;
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
 * Registers the provider limits' series in `registry` and returns their feed:
 * `yiem_model_limit_wait_seconds{limit}` (histogram: how long each request waited for its
 * turn, 0 when it came at once), `yiem_model_limit_429_total{limit}`,
 * `yiem_model_limit_tokens_admitted_total{limit}` and `yiem_model_limit_calls_waiting{limit}`
 * (requests of this process waiting for their turn now: sum it over coordinators).
 */
export function createProviderLimitSeries(registry: Registry): ProviderLimitObserver {
  const labelNames = ["limit"] as const;
  const waits = new Histogram({
    name: "yiem_model_limit_wait_seconds",
    help: "How long model calls waited for their turn under a shared provider limit, by limit",
    labelNames,
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  const refusals = new Counter({
    name: "yiem_model_limit_429_total",
    help: "Model calls under a shared provider limit that the model server answered 429, by limit",
    labelNames,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "yiem_model_limit_tokens_admitted_total",
    help: "Tokens of the model calls admitted under a shared provider limit (reported usage, else the reservation), by limit",
    labelNames,
    registers: [registry],
  });
  const waiting = new Gauge({
    name: "yiem_model_limit_calls_waiting",
    help: "Model calls of this coordinator waiting for their turn under a shared provider limit now, by limit (sum over coordinators)",
    labelNames,
    registers: [registry],
  });
  return {
    waitStarted: (labels) => waiting.inc({ ...labels }),
    waitEnded(labels, seconds) {
      waiting.dec({ ...labels });
      waits.observe({ ...labels }, seconds);
    },
    refused: (labels) => refusals.inc({ ...labels }),
    // Incremented by 0 too: the series shows from the first call on.
    admitted: (labels, count) => tokens.inc({ ...labels }, Math.max(0, count)),
  };
}
