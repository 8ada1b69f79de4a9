// The Prometheus metric provider: one instant query per measurement, results mapped as Argo maps them.
import type { Metric } from '../../manifest/analysis.ts';
import type { HostPolicy } from './host-policy.ts';
import { headersFromList, sendHttpRequest } from './http-request.ts';
import type { MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';

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
 * values (in Prometheus' order; `result[0]` is the usual way to read one), a scalar a number, a string
 * a string. The raw text is what Argo stores: "[v1,v2]" for a vector, the value itself for a scalar.
 */
export function mapPrometheusResult(data: PrometheusBody['data']): ProviderMeasurement {
  const result = data?.result;
  switch (data?.resultType) {
    case 'vector': {
      if (!Array.isArray(result)) throw new MetricProviderError(TYPE, 'malformed vector result');
      const samples = result.map((s: unknown) => sampleValue((s as { value?: unknown }).value));
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
      throw new MetricProviderError(
        TYPE,
        `result type ${JSON.stringify(data?.resultType)} is not supported (use an instant query returning a vector or scalar)`,
      );
  }
}

/** The Prometheus provider: POSTs `query` to `<address>/api/v1/query`, with the metric's headers and timeout. */
export function createPrometheusProvider(options: PrometheusProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric) {
      const spec = metric.provider.prometheus;
      if (spec === undefined)
        throw new MetricProviderError(TYPE, 'no prometheus provider on this metric', metric.name);
      if (spec.rangeQuery !== undefined)
        throw new MetricProviderError(TYPE, 'rangeQuery is not supported yet', metric.name);
      if (spec.authentication?.sigv4 !== undefined || spec.authentication?.oauth2 !== undefined) {
        throw new MetricProviderError(
          TYPE,
          'authentication.sigv4 / oauth2 are not supported yet (use headers)',
          metric.name,
        );
      }
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
      const body = new URLSearchParams({ query: spec.query, timeout: `${timeoutSeconds}s` }).toString();
      const response = await sendHttpRequest({
        provider: TYPE,
        url: `${address.replace(/\/+$/, '')}/api/v1/query`,
        method: 'POST',
        headers,
        body,
        timeoutMs: timeoutSeconds * 1000,
        insecure: spec.insecure === true,
        ...(options.policy && { policy: options.policy }),
      });
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
