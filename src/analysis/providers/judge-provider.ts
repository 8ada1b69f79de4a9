// The judge metric provider: one query for the canary and one for the stable through a series provider, the two samples judged (Mann-Whitney, tolerance).
import type { AnalysisRun, Metric, SeriesProvider } from '../../manifest/analysis.ts';
import { JudgeFieldError } from '../../manifest/judge-field-error.ts';
import { readJudgeFields, type JudgeFields } from '../../manifest/judge-fields.ts';
import { judgeSamples, type JudgeVerdict } from '../judge/judge-samples.ts';
import type { MeasureContext, MetricProvider, MetricProviderRegistry } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';

const TYPE = 'judge';

const PHASES = { pass: 'Successful', fail: 'Failed', inconclusive: 'Inconclusive' } as const;

/** The points a side's answer holds: a number, or a list of numbers (a vector, a range's samples, a series). */
export function samplePoints(value: unknown): number[] | undefined {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value as number[];
  return undefined;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'no value';
  if (Array.isArray(value)) return 'a list that is not all numbers';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

async function sideSample(
  side: 'canary' | 'stable',
  provider: SeriesProvider,
  metric: Metric,
  run: AnalysisRun,
  ctx: MeasureContext,
  registry: MetricProviderRegistry,
): Promise<number[]> {
  // The side is measured as a metric of its own with the same name, so provider errors name the metric.
  const sideMetric: Metric = { name: metric.name, provider };
  try {
    const answer = await registry
      .forMetric(sideMetric)
      .measure(sideMetric, run, { now: ctx.now, logger: ctx.logger });
    const points = samplePoints(answer.value);
    if (answer.phase !== undefined || points === undefined)
      throw new MetricProviderError(
        TYPE,
        `${side}: the query answered ${describe(answer.value)}; the judge needs numbers (one per series or sample)`,
        metric.name,
      );
    return points;
  } catch (error) {
    if (error instanceof MetricProviderError && error.provider === TYPE) throw error;
    const reason = error instanceof MetricProviderError ? error.message : (error as Error).message;
    // A side rate-limited (429) keeps its delay, so the metric is not asked again too soon.
    const retryAfterMs = error instanceof MetricProviderError ? error.retryAfterMs : undefined;
    throw new MetricProviderError(TYPE, `${side}: ${reason}`, metric.name, retryAfterMs);
  }
}

/** What the measurement stores as its value: the verdict's numbers, compact. */
export function judgeSummary(verdict: JudgeVerdict): Record<string, unknown> {
  const round = (x: number | undefined): number | string | undefined =>
    x === undefined ? undefined : Number.isFinite(x) ? Number(x.toPrecision(4)) : String(x);
  return {
    verdict: verdict.verdict,
    canary: { n: verdict.canary.n, median: round(verdict.canary.median) },
    stable: { n: verdict.stable.n, median: round(verdict.stable.median) },
    ...(verdict.pValue !== undefined && { pValue: round(verdict.pValue) }),
    ...(verdict.shift !== undefined && { shift: round(verdict.shift) }),
  };
}

/**
 * The judge provider. Both sides are measured at the same `now` (so a `rangeQuery` covers the same
 * window for both) through `registry`, the providers a side may name; their points go to
 * {@link judgeSamples}. The verdict is the measurement's phase (Successful / Failed / Inconclusive),
 * its reason the message, and a JSON summary (`n`, median per side, p-value, shift) the value. A side
 * that cannot be read is an Error naming the side, as any provider error.
 */
export function createJudgeProvider(registry: MetricProviderRegistry): MetricProvider {
  return {
    type: TYPE,
    async measure(metric, run, ctx) {
      const judge = metric.provider.judge;
      if (judge === undefined)
        throw new MetricProviderError(TYPE, 'no judge provider on this metric', metric.name);
      let settings: JudgeFields;
      try {
        settings = readJudgeFields(judge);
      } catch (error) {
        if (error instanceof JudgeFieldError) throw new MetricProviderError(TYPE, error.message, metric.name);
        throw error;
      }
      const [canary, stable] = await Promise.all([
        sideSample('canary', judge.canary, metric, run, ctx, registry),
        sideSample('stable', judge.stable, metric, run, ctx, registry),
      ]);
      const verdict = judgeSamples(canary, stable, settings);
      const summary = judgeSummary(verdict);
      return {
        value: summary,
        raw: JSON.stringify(summary),
        phase: PHASES[verdict.verdict],
        message: verdict.reason,
      };
    },
  };
}
