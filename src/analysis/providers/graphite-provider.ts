// The Graphite metric provider: one render API request per measurement, the first target's values as the result.
import type { Metric } from '../../manifest/analysis.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest } from './http-request.ts';
import type { MetricProvider } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'graphite';

/** Argo's HTTP timeout for Graphite. */
export const GRAPHITE_TIMEOUT_MS = 10_000;

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

/** Argo stores each value with six decimals (`[90.000000,88.500000]`), which its docs tell users to expect. */
function sixDecimals(value: number): string {
  return Number.isFinite(value) ? value.toFixed(6) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
}

/**
 * The first target's datapoints (`[[value, timestamp], …]`) as the list of its values, nulls (no data
 * in that step) left out; no target at all is an error (`no values found`), as in Argo.
 */
export function mapGraphiteRender(body: unknown): { value: number[]; raw: string } {
  if (!Array.isArray(body)) throw fail('the render answer is not a list of targets');
  if (body.length === 0) throw fail('no values found');
  const points = (body[0] as { datapoints?: unknown }).datapoints;
  if (!Array.isArray(points)) throw fail('the first target has no datapoints');
  const values: number[] = [];
  for (const point of points as unknown[]) {
    if (!Array.isArray(point) || point.length !== 2)
      throw fail(`datapoint ${JSON.stringify(point)} is not [value, time]`);
    const raw = point[0] as unknown;
    if (raw === null) continue;
    const value = typeof raw === 'string' ? Number(raw) : raw;
    if (typeof value !== 'number' || Number.isNaN(value))
      throw fail(`datapoint value ${JSON.stringify(raw)} is not a number`);
    values.push(value);
  }
  return { value: values, raw: `[${values.map(sixDecimals).join(',')}]` };
}

/**
 * The Graphite provider, with Argo's fields and semantics: `GET <address>/render?<query>&format=json`,
 * where `query` is the render API's own parameters (`target=…&from=-5min`) with every whitespace
 * removed (so a `target` may be written over several lines), and a 10 s timeout. The result is the list
 * of the first target's values (`result[0]`, `all(result, # > 90)`). An answer of 400 or more is an error
 * carrying Graphite's own text (`Invalid parameters (Received request for unknown function: …)`); a
 * 429 also says when to ask again.
 */
export function createGraphiteProvider(options: { policy?: HostPolicy } = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx) {
      const spec = metric.provider.graphite;
      if (spec === undefined) throw fail('no graphite provider on this metric', metric.name);
      try {
        const address = spec.address?.trim() ?? '';
        if (address === '') throw fail('address is required');
        const query = (spec.query ?? '').replace(/\s+/g, '').replace(/^[?&]+/, '');
        if (query === '') throw fail('query is required');
        const params = new URLSearchParams(query);
        params.set('format', 'json');
        const response = await sendHttpRequest({
          provider: TYPE,
          url: `${address.replace(/\/+$/, '')}/render?${params.toString()}`,
          headers: { accept: 'application/json' },
          timeoutMs: GRAPHITE_TIMEOUT_MS,
          ...(options.policy && { policy: options.policy }),
        });
        const text = response.body.trim().slice(0, 300) || '(empty body)';
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${text}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        if (response.status >= 400) throw fail(`HTTP ${response.status}: ${text}`);
        let body: unknown;
        try {
          body = JSON.parse(response.body) as unknown;
        } catch {
          throw fail(`HTTP ${response.status}: the answer is not JSON`);
        }
        return mapGraphiteRender(body);
      } catch (error) {
        if (error instanceof MetricProviderError) throw fail(error.reason, metric.name, error.retryAfterMs);
        throw error;
      }
    },
  };
}
