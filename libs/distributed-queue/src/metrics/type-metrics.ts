/**
 * A counter and a histogram labelled by task `type`, cheap on the hot path: observing is plain arithmetic
 * on numbers this object holds, and prom-client reads them only when scraped (these are custom metrics in
 * prom-client's sense: objects with `get()` that a `Registry` formats). prom-client's own metrics hash
 * their labels on every call; these run a few times per task.
 */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What prom-client's `Registry` reads from a metric. */
interface MetricReading {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: MetricValue[];
}

abstract class TypeMetric {
  readonly aggregator = 'sum';
  abstract readonly type: string;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  protected abstract values(): MetricValue[];
  abstract reset(): void;

  /** Called by the registry at scrape time. */
  async get(): Promise<MetricReading> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }
}

/** A counter per type. */
export class TypeCounter extends TypeMetric {
  readonly type = 'counter';
  private readonly totals = new Map<string, number>();

  inc(type: string, by = 1): void {
    this.totals.set(type, (this.totals.get(type) ?? 0) + by);
  }

  reset(): void {
    this.totals.clear();
  }

  protected values(): MetricValue[] {
    return [...this.totals].map(([type, value]) => ({ value, labels: { type } }));
  }
}

interface Distribution {
  /** Observations per bucket (not cumulative), the last one past the highest bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram per type, with fixed bucket bounds (increasing). */
export class TypeHistogram extends TypeMetric {
  readonly type = 'histogram';
  private readonly byType = new Map<string, Distribution>();

  constructor(name: string, help: string, private readonly bounds: number[]) {
    super(name, help);
  }

  observe(type: string, value: number): void {
    let d = this.byType.get(type);
    if (!d) {
      d = { counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.byType.set(type, d);
    }
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    d.counts[i]++;
    d.sum += value;
    d.count++;
  }

  reset(): void {
    this.byType.clear();
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const [type, d] of this.byType) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += d.counts[i];
        out.push({ metricName: `${this.name}_bucket`, value: cumulative, labels: { le, type } });
      });
      out.push({ metricName: `${this.name}_bucket`, value: d.count, labels: { le: '+Inf', type } });
      out.push({ metricName: `${this.name}_sum`, value: d.sum, labels: { type } });
      out.push({ metricName: `${this.name}_count`, value: d.count, labels: { type } });
    }
    return out;
  }
}
