// The Wavefront metric provider: one chart API query per measurement at the measurement's time, the point nearest it per series.
import type { Metric } from '../../manifest/analysis.ts';
import { readWavefrontAddress } from '../../manifest/wavefront-address.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest } from './http-request.ts';
import type { MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import type { ProviderSecrets } from './provider-secrets.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'wavefront';

/** The Secret Argo reads Wavefront tokens from, in its controller's namespace: one key per instance address. */
export const WAVEFRONT_SECRET = 'wavefront-api-tokens';
/** Wavefront's chart query operation (queryApi in its REST API description). */
export const WAVEFRONT_QUERY_PATH = '/api/v2/chart/api';
/** Argo sets no timeout on Wavefront queries; Rollgate gives up after this long. */
export const WAVEFRONT_DEFAULT_TIMEOUT_MS = 10_000;

/** Options for {@link createWavefrontProvider}. */
export interface WavefrontProviderOptions {
  /** Reads `wavefront-api-tokens` in Rollgate's namespace. */
  secrets?: ProviderSecrets;
  /** Which hosts the address may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** How long one query may take (default {@link WAVEFRONT_DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

/** Argo stores each value with two decimals (`0.97`, `[0.97,0.99]`); the condition sees the full number. */
function twoDecimals(value: number): string {
  return value.toFixed(2);
}

interface NearestPoint {
  value: number;
  /** Epoch seconds of the point used. */
  time: number;
  /** Its distance from the measurement's time, in seconds (negative: before it). */
  drift: number;
}

/** The series' point nearest to `atSeconds` (Wavefront's points are `[epoch seconds, value]`). */
function nearestPoint(data: unknown, atSeconds: number, label: string): NearestPoint {
  if (!Array.isArray(data) || data.length === 0) throw fail(`series ${label} has no points`);
  let best: NearestPoint | undefined;
  for (const point of data as unknown[]) {
    if (
      !Array.isArray(point) ||
      point.length !== 2 ||
      typeof point[0] !== 'number' ||
      typeof point[1] !== 'number'
    )
      throw fail(`a point of series ${label} is not [time, value]: ${JSON.stringify(point)}`);
    const drift = point[0] - atSeconds;
    if (best === undefined || Math.abs(drift) < Math.abs(best.drift))
      best = { value: point[1], time: point[0], drift };
  }
  return best as NearestPoint;
}

/**
 * A QueryResult as Argo reads it: one series gives its value nearest to the measurement's time (the
 * result is that number), several give the list of their values; none is an error. The measurement's
 * metadata keeps Argo's `timestamps` (epoch seconds of the points used), `drift` (their distance from
 * the measurement's time, in seconds) and Wavefront's `warnings`. A series without points is an error
 * here (Argo reads it as 0, which a condition would take for a measured zero).
 */
export function mapWavefrontResult(body: unknown, at: Date): ProviderMeasurement {
  const result = (typeof body === 'object' && body !== null ? body : {}) as {
    timeseries?: unknown;
    warnings?: unknown;
    errorType?: unknown;
    errorMessage?: unknown;
  };
  const warnings =
    typeof result.warnings === 'string' && result.warnings !== '' ? result.warnings : undefined;
  if (typeof result.errorMessage === 'string' && result.errorMessage !== '')
    throw fail(
      `query failed: ${typeof result.errorType === 'string' && result.errorType ? `${result.errorType}: ` : ''}${result.errorMessage}`,
    );
  const series = Array.isArray(result.timeseries) ? (result.timeseries as unknown[]) : [];
  if (series.length === 0)
    throw fail(`no time series found in the answer${warnings ? ` (warnings: ${warnings})` : ''}`);
  const atSeconds = Math.floor(at.getTime() / 1000);
  const points = series.map((s, index) => {
    const entry = (typeof s === 'object' && s !== null ? s : {}) as { data?: unknown; label?: unknown };
    const label = typeof entry.label === 'string' && entry.label !== '' ? entry.label : `#${index}`;
    return nearestPoint(entry.data, atSeconds, label);
  });
  const metadata: Record<string, string> = warnings ? { warnings } : {};
  if (points.length === 1) {
    const [only] = points as [NearestPoint];
    return {
      value: only.value,
      raw: twoDecimals(only.value),
      metadata: { ...metadata, timestamps: String(only.time), drift: String(only.drift) },
    };
  }
  const list = (pick: (p: NearestPoint) => string): string => `[${points.map(pick).join(',')}]`;
  return {
    value: points.map((p) => p.value),
    raw: list((p) => twoDecimals(p.value)),
    metadata: {
      ...metadata,
      timestamps: list((p) => String(p.time)),
      drift: list((p) => String(p.drift)),
    },
  };
}

/** What Wavefront said went wrong: its `status.message` or `message`, else the body's start. */
function wavefrontMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { status?: { message?: unknown }; message?: unknown };
    if (typeof parsed.status?.message === 'string' && parsed.status.message !== '')
      return parsed.status.message;
    if (typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // Not JSON (a proxy's page): its start says enough.
  }
  return body.trim().slice(0, 200) || '(empty body)';
}

async function readToken(key: string, secrets: ProviderSecrets | undefined): Promise<string> {
  const where = `Secret ${WAVEFRONT_SECRET} in Rollgate's namespace`;
  if (secrets === undefined) throw fail(`no Secret reader is configured to read ${where}`);
  let data: Readonly<Record<string, string>> | undefined;
  try {
    data = await secrets.read(WAVEFRONT_SECRET);
  } catch (error) {
    throw fail(`cannot read ${where}: ${(error as Error).message}`);
  }
  if (data === undefined) throw fail(`${where} not found (it holds one token per instance address)`);
  const token = Object.hasOwn(data, key) ? data[key] : undefined;
  if (!token) throw fail(`${where} has no token for ${key} (a key named as the address)`);
  return token;
}

/**
 * The Wavefront provider, with Argo's fields and semantics: `GET <address>/api/v2/chart/api` with the
 * WQL `query` as `q`, start and end both the measurement's time in epoch milliseconds, granularity `s`,
 * at most one point per series and series outside the window included (`p=1`, `i=true`), so Wavefront
 * answers each series' point nearest to now; read by {@link mapWavefrontResult}. The token is the key
 * named as the address in the Secret `wavefront-api-tokens` (Rollgate's namespace), sent as
 * `Authorization: Bearer`. A non-2xx answer is an error carrying Wavefront's message; 429 also says when
 * to ask again.
 */
export function createWavefrontProvider(options: WavefrontProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx) {
      const spec = metric.provider.wavefront;
      if (spec === undefined) throw fail('no wavefront provider on this metric', metric.name);
      let token: string | undefined;
      try {
        const endpoint = readWavefrontAddress(spec.address ?? '');
        if ('problem' in endpoint) throw fail(`address ${endpoint.problem}`);
        const query = spec.query ?? '';
        if (query.trim() === '') throw fail('query is required');
        token = await readToken(endpoint.tokenKey, options.secrets);
        const atMs = String(Math.floor(ctx.now.getTime() / 1000) * 1000);
        const params = new URLSearchParams({ q: query, s: atMs, e: atMs, g: 's', p: '1', i: 'true' });
        const response = await sendHttpRequest({
          provider: TYPE,
          url: `${endpoint.baseUrl}${WAVEFRONT_QUERY_PATH}?${params.toString()}`,
          headers: { accept: 'application/json', authorization: `Bearer ${token}` },
          timeoutMs: options.timeoutMs ?? WAVEFRONT_DEFAULT_TIMEOUT_MS,
          ...(options.policy && { policy: options.policy }),
        });
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${wavefrontMessage(response.body)}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        if (response.status < 200 || response.status >= 300)
          throw fail(`HTTP ${response.status}: ${wavefrontMessage(response.body)}`);
        let body: unknown;
        try {
          body = JSON.parse(response.body) as unknown;
        } catch {
          throw fail(`HTTP ${response.status}: the answer is not JSON`);
        }
        return mapWavefrontResult(body, ctx.now);
      } catch (error) {
        if (!(error instanceof MetricProviderError)) throw error;
        const scrub = secretScrubber(token === undefined ? [] : [token]);
        throw fail(scrub(error.reason), metric.name, error.retryAfterMs);
      }
    },
  };
}
