import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type MetricKind = 'counter' | 'gauge' | 'histogram';

/**
 * One metric as the platform declares it: its name, what it measures, its labels and (for a histogram)
 * its buckets. The API and the workers build their prom-client metrics from these, and docs/metrics.md
 * is generated from the same declarations, so the page names exactly what is served.
 */
export interface MetricSpec<L extends string = string, K extends MetricKind = MetricKind> {
  readonly name: string;
  readonly kind: K;
  readonly help: string;
  readonly labels: readonly L[];
  /** Histograms only: the upper bounds of its buckets, in its unit. */
  readonly buckets?: readonly number[];
}

export const counter = <L extends string>(spec: Omit<MetricSpec<L, 'counter'>, 'kind'>): MetricSpec<L, 'counter'> => ({
  ...spec,
  kind: 'counter',
});

export const gauge = <L extends string>(spec: Omit<MetricSpec<L, 'gauge'>, 'kind'>): MetricSpec<L, 'gauge'> => ({
  ...spec,
  kind: 'gauge',
});

export const histogram = <L extends string>(
  spec: Omit<MetricSpec<L, 'histogram'>, 'kind'> & { buckets: readonly number[] },
): MetricSpec<L, 'histogram'> => ({ ...spec, kind: 'histogram' });

/** The prom-client counter of a declaration, in `registry`. */
export function counterOf<L extends string>(spec: MetricSpec<L, 'counter'>, registry: Registry): Counter<L> {
  return new Counter({ name: spec.name, help: spec.help, labelNames: spec.labels, registers: [registry] });
}

/**
 * A counter of a declaration whose value is read from elsewhere when scraped (a server's own running count):
 * `read` gives its total, which may start again from zero when that server restarts, as a counter may.
 */
export function counterFrom(
  spec: MetricSpec<never, 'counter'>,
  registry: Registry,
  read: () => Promise<number>,
): Counter<never> {
  return new Counter({
    name: spec.name,
    help: spec.help,
    labelNames: [],
    registers: [registry],
    async collect(this: Counter<never>) {
      this.reset();
      this.inc(await read());
    },
  });
}

/** The prom-client histogram of a declaration, in `registry`. */
export function histogramOf<L extends string>(spec: MetricSpec<L, 'histogram'>, registry: Registry): Histogram<L> {
  return new Histogram({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labels,
    buckets: [...(spec.buckets ?? [])],
    registers: [registry],
  });
}

/** The prom-client gauge of a declaration, in `registry`; `collect`, when given, sets it as it is scraped. */
export function gaugeOf<L extends string>(
  spec: MetricSpec<L, 'gauge'>,
  registry: Registry,
  collect?: (gauge: Gauge<L>) => Promise<void> | void,
): Gauge<L> {
  return new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labels,
    registers: [registry],
    ...(collect
      ? {
          async collect(this: Gauge<L>) {
            // Labels no longer reported (a deployment gone, a state emptied) are not served stale.
            this.reset();
            await collect(this);
          },
        }
      : {}),
  });
}
