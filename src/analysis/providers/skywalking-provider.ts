// The SkyWalking metric provider: one GraphQL query to the OAP server per measurement, over the last `interval`, its data as the result.
import type { Metric } from '../../manifest/analysis.ts';
import { DurationError, parseDuration } from '../../manifest/duration.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest } from './http-request.ts';
import type { MetricProvider } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'skywalking';

/** Argo's timeout for a SkyWalking query. */
export const SKYWALKING_DEFAULT_TIMEOUT_MS = 30_000;

/** Options for {@link createSkyWalkingProvider}. */
export interface SkyWalkingProviderOptions {
  /** Which hosts the address may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** How long one query may take (default {@link SKYWALKING_DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** SkyWalking's `Duration` input: minute-step bounds as `yyyy-MM-dd HHmm`. */
export interface SkyWalkingDuration {
  start: string;
  end: string;
  step: 'MINUTE';
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

function minute(date: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())} ${two(date.getUTCHours())}${two(date.getUTCMinutes())}`;
}

/**
 * The `$duration` variable Argo gives every query: from `now − interval` to `now`, step MINUTE, in
 * SkyWalking's minute format. Rollgate writes UTC (Argo writes its controller's local time, UTC in
 * its image).
 */
export function skyWalkingDuration(now: Date, intervalMs: number): SkyWalkingDuration {
  return { start: minute(new Date(now.getTime() - intervalMs)), end: minute(now), step: 'MINUTE' };
}

/** GraphQL's `errors[].message` (the first, as Argo's client reports it), or undefined. */
function graphQlError(parsed: unknown): string | undefined {
  const errors = (parsed as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  const message = (errors[0] as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : JSON.stringify(errors[0]);
}

/**
 * The SkyWalking provider, with Argo's fields and semantics: POSTs `{query, variables: {duration}}` to
 * `<address>/graphql`, `duration` covering the last `interval` ({@link skyWalkingDuration}). The
 * answer's `data` is the result, as the query shaped it (`result.service_apdex.values.values`), and is
 * stored as JSON; no data is an error. A GraphQL error is an error carrying SkyWalking's message; so is
 * a non-2xx answer; 429 also says when to ask again.
 */
export function createSkyWalkingProvider(options: SkyWalkingProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx) {
      const spec = metric.provider.skywalking;
      if (spec === undefined) throw fail('no skywalking provider on this metric', metric.name);
      try {
        const address = spec.address?.trim() ?? '';
        if (address === '') throw fail('address is required');
        const query = spec.query ?? '';
        if (query.trim() === '') throw fail('query is required');
        let intervalMs: number;
        try {
          intervalMs = parseDuration(spec.interval ?? '');
        } catch (error) {
          if (error instanceof DurationError) throw fail(`interval: ${error.message}`);
          throw error;
        }
        if (intervalMs <= 0) throw fail('interval must be more than 0');
        const response = await sendHttpRequest({
          provider: TYPE,
          url: `${address.replace(/\/+$/, '')}/graphql`,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query, variables: { duration: skyWalkingDuration(ctx.now, intervalMs) } }),
          timeoutMs: options.timeoutMs ?? SKYWALKING_DEFAULT_TIMEOUT_MS,
          ...(options.policy && { policy: options.policy }),
        });
        let parsed: unknown;
        try {
          parsed = JSON.parse(response.body) as unknown;
        } catch {
          parsed = undefined;
        }
        const text = graphQlError(parsed) ?? (response.body.trim().slice(0, 200) || '(empty body)');
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${text}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        if (response.status < 200 || response.status >= 300) throw fail(`HTTP ${response.status}: ${text}`);
        if (parsed === undefined) throw fail(`HTTP ${response.status}: the answer is not JSON`);
        const error = graphQlError(parsed);
        if (error !== undefined) throw fail(`query failed: ${error}`);
        const data = (parsed as { data?: unknown } | null)?.data;
        if (data === undefined || data === null) throw fail('no results returned from SkyWalking query');
        return { value: data, raw: JSON.stringify(data) };
      } catch (error) {
        if (error instanceof MetricProviderError) throw fail(error.reason, metric.name, error.retryAfterMs);
        throw error;
      }
    },
  };
}
