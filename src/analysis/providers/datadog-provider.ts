// The Datadog metric provider: a v1 timeseries query or a v2 scalar query (queries + formula) over the last `interval`.
import type { AnalysisRun, DatadogMetric, Metric } from '../../manifest/analysis.ts';
import { DurationError, parseDuration } from '../../manifest/duration.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest, type HttpResponse } from './http-request.ts';
import type { MeasureContext, MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import type { ProviderSecrets } from './provider-secrets.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'datadog';

/** The Secret Argo reads Datadog's keys from, in its controller's namespace, and its keys. */
export const DATADOG_SECRET = 'datadog';
export const DATADOG_SECRET_KEYS = { apiKey: 'api-key', appKey: 'app-key', address: 'address' } as const;
/** Datadog's US1 site, used when the Secret names no `address` (another site: `https://api.datadoghq.eu`, …). */
export const DATADOG_DEFAULT_ADDRESS = 'https://api.datadoghq.com';
/** Argo's defaults: the window queried and the HTTP timeout. */
export const DATADOG_DEFAULT_INTERVAL = '5m';
export const DATADOG_DEFAULT_REQUEST_TIMEOUT = '10s';
/** Group values kept in a measurement's `metadata.groups` (the value itself keeps them all). */
export const DATADOG_MAX_GROUPS_SHOWN = 100;

/** Options for {@link createDatadogProvider}. */
export interface DatadogProviderOptions {
  /** Reads the `datadog` Secret (or `secretRef`'s); without it only the environment can give keys. */
  secrets?: ProviderSecrets;
  /** DD_API_KEY, DD_APP_KEY and DD_ADDRESS, read when the metric names no Secret (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Which hosts the address may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
}

interface DatadogCredentials {
  address: string;
  apiKey: string;
  appKey: string;
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

/**
 * The keys, in Argo's order: the Secret `secretRef.name` when given (in the run's namespace when
 * `namespaced`, else Rollgate's); otherwise DD_API_KEY + DD_APP_KEY + DD_ADDRESS when all three are
 * in the environment, else the Secret `datadog` in Rollgate's namespace.
 */
async function findCredentials(
  dd: DatadogMetric,
  run: AnalysisRun,
  options: DatadogProviderOptions,
): Promise<DatadogCredentials> {
  const named = dd.secretRef?.name;
  if (named === undefined || named === '') {
    const env = options.env ?? process.env;
    const [apiKey, appKey, address] = [env['DD_API_KEY'], env['DD_APP_KEY'], env['DD_ADDRESS']];
    if (apiKey && appKey && address !== undefined) return { apiKey, appKey, address };
  }
  const name = named || DATADOG_SECRET;
  const namespace = dd.secretRef?.namespaced === true ? run.metadata.namespace : undefined;
  const where =
    namespace === undefined ? `Secret ${name} in Rollgate's namespace` : `Secret ${namespace}/${name}`;
  if (options.secrets === undefined) throw fail(`no Secret reader is configured to read ${where}`);
  let data: Readonly<Record<string, string>> | undefined;
  try {
    data = await options.secrets.read(name, namespace);
  } catch (error) {
    throw fail(`cannot read ${where}: ${(error as Error).message}`);
  }
  if (data === undefined) throw fail(`${where} not found (it holds api-key, app-key and address)`);
  const apiKey = data[DATADOG_SECRET_KEYS.apiKey];
  const appKey = data[DATADOG_SECRET_KEYS.appKey];
  if (!apiKey || !appKey) throw fail(`${where} has no ${apiKey ? 'app-key' : 'api-key'}`);
  return { apiKey, appKey, address: data[DATADOG_SECRET_KEYS.address] ?? '' };
}

function durationSeconds(value: string, field: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    if (error instanceof DurationError) throw fail(`${field}: ${error.message}`);
    throw error;
  }
  if (ms <= 0) throw fail(`${field} must be more than 0`);
  return ms / 1000;
}

/** What Datadog said went wrong: its `errors` list (APIErrorResponse), `error`, or the body's start. */
function datadogMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { errors?: unknown; error?: unknown };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0) return parsed.errors.map(String).join('; ');
    if (typeof parsed.errors === 'string' && parsed.errors !== '') return parsed.errors;
    if (typeof parsed.error === 'string' && parsed.error !== '') return parsed.error;
  } catch {
    // Not JSON (a proxy's page): its start says enough.
  }
  return body.trim().slice(0, 200) || '(empty body)';
}

/** The request for v1 (GET /api/v1/query, seconds) or v2 (POST /api/v2/query/scalar, milliseconds). */
function buildRequest(
  dd: DatadogMetric,
  address: string,
  nowSeconds: number,
  windowSeconds: number,
): { url: string; method: string; body?: string } {
  const base = (address === '' ? DATADOG_DEFAULT_ADDRESS : address).replace(/\/+$/, '');
  const from = nowSeconds - windowSeconds;
  if ((dd.apiVersion ?? 'v1') === 'v1') {
    const params = new URLSearchParams({ query: dd.query ?? '', from: String(from), to: String(nowSeconds) });
    return { url: `${base}/api/v1/query?${params.toString()}`, method: 'GET' };
  }
  // A single `query` under v2 is the one query of a scalar request, as Argo sends it.
  const queries = dd.query !== undefined && dd.query !== '' ? { query: dd.query } : (dd.queries ?? {});
  const aggregator = dd.aggregator ?? 'last';
  const attributes = {
    from: from * 1000,
    to: nowSeconds * 1000,
    queries: Object.entries(queries).map(([name, query]) => ({
      data_source: 'metrics',
      name,
      query,
      aggregator,
    })),
    ...(dd.formula !== undefined && dd.formula !== '' && { formulas: [{ formula: dd.formula }] }),
  };
  return {
    url: `${base}/api/v2/query/scalar`,
    method: 'POST',
    body: JSON.stringify({ data: { type: 'scalar_request', attributes } }),
  };
}

function formatNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
}

/** v1: the last point of the first series (Argo's reading); no series or no point → nil ("[]"). */
export function mapDatadogV1(body: unknown): ProviderMeasurement {
  const parsed = body as { status?: unknown; error?: unknown; series?: unknown };
  if (parsed.status === 'error')
    throw fail(`query failed: ${typeof parsed.error === 'string' ? parsed.error : 'status error'}`);
  const series = Array.isArray(parsed.series) ? parsed.series : [];
  const points = (series[0] as { pointlist?: unknown } | undefined)?.pointlist;
  if (!Array.isArray(points) || points.length === 0) return { value: null, raw: '[]' };
  const point = points[points.length - 1] as unknown;
  if (!Array.isArray(point) || point.length !== 2) throw fail('a point of the series does not have 2 values');
  const value = point[1] as unknown;
  if (value === null) return { value: null, raw: 'null' };
  if (typeof value !== 'number') throw fail('a point of the series is not a number');
  return { value, raw: formatNumber(value) };
}

interface ScalarColumn {
  name?: unknown;
  type?: unknown;
  values?: unknown;
}

/**
 * v2: the first number column. Without a group column (no `by {tag}`) the result is its first value
 * (nil when empty); with one, it is the list of values, one per group (nulls — groups without data —
 * left out), and `metadata.groups` names each value's group (`[{"name":"us-east,web","value":0.2}]`,
 * at most {@link DATADOG_MAX_GROUPS_SHOWN}: the lowest and highest halves, so an outlier either way shows).
 */
export function mapDatadogV2(body: unknown): ProviderMeasurement {
  const parsed = body as { errors?: unknown; data?: { attributes?: { columns?: unknown } } };
  if (typeof parsed.errors === 'string' && parsed.errors !== '') throw fail(`query failed: ${parsed.errors}`);
  const columns = (
    Array.isArray(parsed.data?.attributes?.columns) ? parsed.data.attributes.columns : []
  ) as ScalarColumn[];
  const numbers = columns.find((c) => c.type === undefined || c.type === 'number');
  const groups = columns.filter((c) => c.type === 'group');
  const raw = Array.isArray(numbers?.values) ? (numbers.values as unknown[]) : [];
  const values: number[] = [];
  const named: Array<{ name: string; value: number }> = [];
  raw.forEach((entry, index) => {
    if (entry === null) return;
    if (typeof entry !== 'number') throw fail(`value ${JSON.stringify(entry)} is not a number`);
    values.push(entry);
    if (groups.length === 0) return;
    const parts = groups.flatMap((g) => {
      const tags = Array.isArray(g.values) ? (g.values[index] as unknown) : undefined;
      if (!Array.isArray(tags) || tags.length === 0) throw fail(`no group label for value ${index}`);
      return tags.map(String);
    });
    named.push({ name: parts.join(','), value: entry });
  });
  if (groups.length === 0) {
    const first = values[0];
    return first === undefined ? { value: null, raw: '[]' } : { value: first, raw: formatNumber(first) };
  }
  let shown = named;
  const metadata: Record<string, string> = {};
  if (named.length > DATADOG_MAX_GROUPS_SHOWN) {
    const sorted = [...named].sort((a, b) => a.value - b.value);
    const low = DATADOG_MAX_GROUPS_SHOWN / 2;
    shown = [...sorted.slice(0, low), ...sorted.slice(sorted.length - (DATADOG_MAX_GROUPS_SHOWN - low))];
    metadata['groups_truncated'] = 'true';
  }
  metadata['groups'] = JSON.stringify(shown);
  return { value: values, raw: `[${values.map(formatNumber).join(',')}]`, metadata };
}

function readAnswer(response: HttpResponse, apiVersion: 'v1' | 'v2'): ProviderMeasurement {
  let body: unknown;
  try {
    body = JSON.parse(response.body) as unknown;
  } catch {
    throw fail(`HTTP ${response.status}: response is not JSON`);
  }
  return apiVersion === 'v1' ? mapDatadogV1(body) : mapDatadogV2(body);
}

/**
 * The Datadog provider, with Argo's fields and semantics: `apiVersion: v1` (default) GETs
 * `<address>/api/v1/query` for `query` over [now − interval, now] in seconds and takes the last point of
 * the first series; `v2` POSTs a scalar request to `<address>/api/v2/query/scalar` (milliseconds) with
 * `queries` (or `query` as the one query), each with `aggregator` (default last), and `formula`. Keys
 * go in DD-API-KEY / DD-APPLICATION-KEY, from the Secret Argo reads ({@link findCredentials}); the
 * address (the Datadog site) comes from that Secret. A non-2xx answer is an error carrying Datadog's
 * own message; 429 also tells the run when to ask again (Retry-After / X-RateLimit-Reset).
 */
export function createDatadogProvider(options: DatadogProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, run: AnalysisRun, ctx: MeasureContext) {
      const dd = metric.provider.datadog;
      if (dd === undefined) throw fail('no datadog provider on this metric', metric.name);
      let keys: DatadogCredentials | undefined;
      try {
        keys = await findCredentials(dd, run, options);
        const apiVersion = dd.apiVersion ?? 'v1';
        const windowSeconds = durationSeconds(dd.interval ?? DATADOG_DEFAULT_INTERVAL, 'interval');
        const timeoutSeconds = durationSeconds(
          dd.requestTimeout ?? DATADOG_DEFAULT_REQUEST_TIMEOUT,
          'requestTimeout',
        );
        const request = buildRequest(dd, keys.address, Math.floor(ctx.now.getTime() / 1000), windowSeconds);
        const response = await sendHttpRequest({
          provider: TYPE,
          ...request,
          headers: {
            accept: 'application/json',
            ...(request.body !== undefined && { 'content-type': 'application/json' }),
            'dd-api-key': keys.apiKey,
            'dd-application-key': keys.appKey,
          },
          timeoutMs: timeoutSeconds * 1000,
          ...(options.policy && { policy: options.policy }),
        });
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${datadogMessage(response.body)}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        if (response.status < 200 || response.status >= 300)
          throw fail(`HTTP ${response.status}: ${datadogMessage(response.body)}`);
        return readAnswer(response, apiVersion);
      } catch (error) {
        if (!(error instanceof MetricProviderError)) throw error;
        // Datadog may echo a request back; the keys never reach a stored message.
        const scrub = secretScrubber(keys === undefined ? [] : [keys.apiKey, keys.appKey]);
        throw fail(scrub(error.reason), metric.name, error.retryAfterMs);
      }
    },
  };
}
