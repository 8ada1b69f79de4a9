// Label values that come from objects anyone may annotate, held to a fixed shape and a fixed number of series.
import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/** What a label value becomes when it is not allowed, or when the metric has no room for a new series. */
export const OTHER_LABEL_VALUE = 'other';

/** A name as Rollgate's triggers, services and ConfigMap keys are written: short, no `/`, no spaces. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** How the labels of one metric are held. */
export interface LabelBoundsOptions<T extends string> {
  /** Labels whose value must be one of these; anything else is `other`. */
  fixed?: { [K in T]?: readonly string[] };
  /** Labels whose value must look like a name (at most 63 characters, no `/`); anything else is `other`. */
  names?: readonly T[];
  /**
   * Series the metric may have; a label set beyond it has every `names` label recorded as `other`, so an
   * attacker who writes a new subscription annotation per second adds nothing after the first few.
   */
  maxSeries: number;
  /** Labels of any shape recorded as `other` once the metric has `maxSeries` series (as `names` are). */
  capped?: readonly T[];
}

/**
 * Bounds label values before they reach prom-client. Some values come from annotations on objects that
 * users of the cluster write (a notification subscription names its trigger and service in its key); each
 * distinct value is a new time series, held in memory and in every scrape for the process's life.
 */
export class LabelBounds<T extends string> {
  private readonly seen = new Set<string>();

  constructor(private readonly options: LabelBoundsOptions<T>) {}

  /** `labels` with every value the metric may not take replaced by `other`. */
  apply(labels: LabelValues<T>): LabelValues<T> {
    const bounded: Partial<Record<T, string | number>> = { ...labels };
    for (const [label, allowed] of Object.entries(this.options.fixed ?? {}) as Array<
      [T, readonly string[]]
    >) {
      const value = bounded[label];
      if (value !== undefined && !allowed.includes(String(value))) bounded[label] = OTHER_LABEL_VALUE;
    }
    for (const label of this.options.names ?? []) {
      const value = bounded[label];
      if (value !== undefined && !NAME.test(String(value))) bounded[label] = OTHER_LABEL_VALUE;
    }
    const key = JSON.stringify(Object.entries(bounded).sort(([a], [b]) => (a < b ? -1 : 1)));
    if (this.seen.has(key)) return bounded as LabelValues<T>;
    if (this.seen.size < this.options.maxSeries) {
      this.seen.add(key);
      return bounded as LabelValues<T>;
    }
    for (const label of [...(this.options.names ?? []), ...(this.options.capped ?? [])])
      if (bounded[label] !== undefined) bounded[label] = OTHER_LABEL_VALUE;
    return bounded as LabelValues<T>;
  }
}

/** A Counter whose labels pass through {@link LabelBounds} on every `inc` (record through `inc`, not `labels()`). */
export class BoundedCounter<T extends string> extends Counter<T> {
  constructor(configuration: CounterConfiguration<T>, bounds: LabelBoundsOptions<T>) {
    super(configuration);
    // prom-client sets `inc` on the instance in its constructor (it differs with exemplars), so a method
    // override would never be called: the instance's own is wrapped instead.
    const held = new LabelBounds(bounds);
    const inc = this.inc.bind(this) as (labels?: unknown, value?: number) => void;
    this.inc = ((labels?: unknown, value?: number) =>
      typeof labels === 'object' && labels !== null
        ? inc(held.apply(labels as LabelValues<T>), value)
        : inc(labels, value)) as Counter<T>['inc'];
  }
}
