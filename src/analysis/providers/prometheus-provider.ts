// The Prometheus metric provider: one instant or range query per measurement, results mapped as Argo maps them.
import type { Metric, PrometheusRangeQuery } from '../../manifest/analysis.ts';
import { DurationError, parseDuration } from '../../manifest/duration.ts';
import { evaluateTimeExpression, TimeExpressionError } from '../../manifest/time-expression.ts';
import { sendAuthenticatedRequest } from './authenticated-request.ts';
import type { HostPolicy } from './host-policy.ts';
import { headersFromList } from './http-request.ts';
import type { MeasureContext, MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { createOAuth2TokenSource, type OAuth2TokenSource } from './oauth2-token-source.ts';

/** Default query timeout when the metric sets none. */
export const PROMETHEUS_DEFAULT_TIMEOUT_SECONDS = 30;

const TYPE = 'prometheus';

/** Options for {@link createPrometheusProvider}. */
export interface PrometheusProviderOptions {
  /** Used when a metric gives no `address` (Argo reads it from its controller configuration). */
  defaultAddress?: string;
  /** Timeout when the metric gives none, in seconds. */
  defaultTimeoutSeconds?: number;
  /** Which hosts queries may reach (default: anything but link-local and metadata addresses). */
  policy?: HostPolicy;
  /** OAuth2 tokens (default: a cache of this provider's own). */
  tokens?: OAuth2TokenSource;
  /** Where `authentication.sigv4` reads AWS credentials and region (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Evaluate an instant query at the measurement's `now` (its `time` parameter) rather than at
   * Prometheus' own clock: for a replay, whose clock is in the past. A live run leaves it off, as Argo.
   */
  queryAtNow?: boolean;
}

interface PrometheusBody {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: unknown };
}

/** Prometheus writes sample values as strings ("0.99", "NaN", "+Inf"). */
function sampleValue(sample: unknown): { value: number; text: string } {
  const text = Array.isArray(sample) && typeof sample[1] === 'string' ? sample[1] : undefined;
  if (text === undefined) throw new MetricProviderError(TYPE, 'malformed sample in the query result');
  const value = text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text);
  return { value, text };
}

/**
 * Maps a successful query result to what conditions see: a vector becomes an array of its sample
 * values (in Prometheus' order; `result[0]` is the usual way to read one), a matrix (range query) the
 * array of all its series' samples one series after the other (`all(result, # < 1000)`), a scalar a
 * number, a string a string. The raw text is what Argo stores: "[v1,v2]" for a vector or matrix, the
 * value itself for a scalar.
 */
export function mapPrometheusResult(data: PrometheusBody['data']): ProviderMeasurement {
  const result = data?.result;
  switch (data?.resultType) {
    case 'vector': {
      if (!Array.isArray(result)) throw new MetricProviderError(TYPE, 'malformed vector result');
      const samples = result.map((s: unknown) => sampleValue((s as { value?: unknown }).value));
      return { value: samples.map((s) => s.value), raw: `[${samples.map((s) => s.text).join(',')}]` };
    }
    case 'matrix': {
      // As Argo: every sample of every series, series after series, in one flat array.
      if (!Array.isArray(result)) throw new MetricProviderError(TYPE, 'malformed matrix result');
      const samples = result.flatMap((series: unknown) => {
        const values = (series as { values?: unknown }).values;
        if (!Array.isArray(values)) throw new MetricProviderError(TYPE, 'malformed matrix result');
        return values.map(sampleValue);
      });
      return { value: samples.map((s) => s.value), raw: `[${samples.map((s) => s.text).join(',')}]` };
    }
    case 'scalar': {
      const { value, text } = sampleValue(result);
      return { value, raw: text };
    }
    case 'string': {
      const text = Array.isArray(result) && typeof result[1] === 'string' ? result[1] : '';
      return { value: text, raw: text };
    }
    default:
      throw new MetricProviderError(TYPE, `result type ${JSON.stringify(data?.resultType)} is not supported`);
  }
}

/** The form fields of a range query: `start`/`end` evaluated at `now`, `step` in seconds. */
export function rangeQueryParameters(range: PrometheusRangeQuery, now: Date): Record<string, string> {
  let start: Date;
  let end: Date;
  try {
    start = evaluateTimeExpression(range.start, now);
    end = evaluateTimeExpression(range.end, now);
  } catch (error) {
    if (error instanceof TimeExpressionError)
      throw new MetricProviderError(TYPE, `rangeQuery: ${error.message}`);
    throw error;
  }
  let stepMs: number;
  try {
    stepMs = parseDuration(range.step);
  } catch (error) {
    if (error instanceof DurationError)
      throw new MetricProviderError(TYPE, `rangeQuery.step: ${error.message}`);
    throw error;
  }
  if (stepMs <= 0) throw new MetricProviderError(TYPE, 'rangeQuery.step must be more than 0');
  if (end.getTime() < start.getTime()) throw new MetricProviderError(TYPE, 'rangeQuery: end is before start');
  return {
    start: (start.getTime() / 1000).toFixed(3),
    end: (end.getTime() / 1000).toFixed(3),
    step: String(stepMs / 1000),
  };
}

/**
 * The Prometheus provider: POSTs `query` to `<address>/api/v1/query` (or, with `rangeQuery`, to
 * `/api/v1/query_range` with its start, end and step), with the metric's headers, timeout and
 * `authentication` (basicAuth, oauth2 or sigv4).
 */
export function createPrometheusProvider(options: PrometheusProviderOptions = {}): MetricProvider {
  const tokens = options.tokens ?? createOAuth2TokenSource();
  const env = options.env ?? process.env;
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx: MeasureContext) {
      const spec = metric.provider.prometheus;
      if (spec === undefined)
        throw new MetricProviderError(TYPE, 'no prometheus provider on this metric', metric.name);
      const address = spec.address ?? options.defaultAddress;
      if (address === undefined || address.trim() === '') {
        throw new MetricProviderError(TYPE, 'address is required', metric.name);
      }
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        ...headersFromList(spec.headers),
      };
      const timeoutSeconds =
        spec.timeout ?? options.defaultTimeoutSeconds ?? PROMETHEUS_DEFAULT_TIMEOUT_SECONDS;
      let form: Record<string, string>;
      try {
        form =
          spec.rangeQuery !== undefined
            ? { query: spec.query, ...rangeQueryParameters(spec.rangeQuery, ctx.now) }
            : options.queryAtNow === true
              ? { query: spec.query, time: (ctx.now.getTime() / 1000).toFixed(3) }
              : { query: spec.query };
      } catch (error) {
        if (error instanceof MetricProviderError)
          throw new MetricProviderError(TYPE, error.reason, metric.name);
        throw error;
      }
      const body = new URLSearchParams({ ...form, timeout: `${timeoutSeconds}s` }).toString();
      const endpoint = spec.rangeQuery === undefined ? 'query' : 'query_range';
      let response;
      try {
        response = await sendAuthenticatedRequest(
          {
            provider: TYPE,
            url: `${address.replace(/\/+$/, '')}/api/v1/${endpoint}`,
            method: 'POST',
            headers,
            body,
            timeoutMs: timeoutSeconds * 1000,
            insecure: spec.insecure === true,
            ...(options.policy && { policy: options.policy }),
          },
          spec.authentication,
          { now: ctx.now, tokens, env },
        );
      } catch (error) {
        if (error instanceof MetricProviderError)
          throw new MetricProviderError(TYPE, error.reason, metric.name);
        throw error;
      }
      let parsed: PrometheusBody;
      try {
        parsed = JSON.parse(response.body) as PrometheusBody;
      } catch {
        throw new MetricProviderError(TYPE, `HTTP ${response.status}: response is not JSON`, metric.name);
      }
      if (response.status < 200 || response.status >= 300 || parsed.status !== 'success') {
        const why = parsed.error ? `${parsed.errorType ?? 'error'}: ${parsed.error}` : 'query failed';
        throw new MetricProviderError(TYPE, `HTTP ${response.status}: ${why}`, metric.name);
      }
      return mapPrometheusResult(parsed.data);
    },
  };
}
