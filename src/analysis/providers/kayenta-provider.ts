// The Kayenta metric provider: starts a canary judgement in Kayenta, polls it until complete, and maps its score through the metric's thresholds.
import type { AnalysisRun, KayentaMetric, KayentaThreshold, Metric } from '../../manifest/analysis.ts';
import { DurationError, parseDuration } from '../../manifest/duration.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest, type HttpResponse } from './http-request.ts';
import type { MeasureContext, MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'kayenta';

/** Measurement metadata key holding the execution being judged (Argo's key). */
export const KAYENTA_EXECUTION_METADATA = 'canaryExecutionId';
/** How long Argo waits before asking Kayenta again about an execution. */
export const KAYENTA_POLL_INTERVAL_MS = 15_000;
/** Argo's HTTP timeout for Kayenta. */
export const KAYENTA_DEFAULT_TIMEOUT_MS = 15_000;

/** Options for {@link createKayentaProvider}. */
export interface KayentaProviderOptions {
  /** Which hosts the address may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** How long one request may take (default {@link KAYENTA_DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** One side of a scope as Kayenta's CanaryScope reads it. */
export interface KayentaScopeRequest {
  scope: string;
  location: string;
  step: number;
  start: string;
  end: string;
}

/** The body of `POST /canary/{canaryConfigId}` (Kayenta's CanaryExecutionRequest). */
export interface KayentaExecutionRequest {
  scopes: Record<string, { controlScope: KayentaScopeRequest; experimentScope: KayentaScopeRequest }>;
  thresholds: { pass: number; marginal: number };
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

/** RFC 3339 to the second, as Argo formats times for Kayenta. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The metric's threshold: `threshold` (Argo's field) or `thresholds` (as Argo's docs write it). */
export function kayentaThreshold(spec: KayentaMetric): KayentaThreshold {
  const threshold = spec.threshold ?? spec.thresholds;
  if (threshold === undefined) throw fail('threshold is required ({pass, marginal})');
  return threshold;
}

/**
 * The execution request, as Argo builds it: each scope by name, its `region` sent as Kayenta's
 * `location`; a side without `start` starts at the run's start with `lookback`, else one metric
 * `interval` before `now`; without `end` it ends at `now`. Start (and end) are set on both sides or
 * neither.
 */
export function kayentaExecutionRequest(
  spec: KayentaMetric,
  metric: Pick<Metric, 'interval'>,
  runStartedAt: string | undefined,
  now: Date,
): KayentaExecutionRequest {
  const scopes: KayentaExecutionRequest['scopes'] = {};
  for (const scope of spec.scopes ?? []) {
    const { controlScope: control, experimentScope: experiment } = scope;
    for (const field of ['start', 'end'] as const)
      if (!control[field] !== !experiment[field])
        throw fail(
          `scope ${scope.name}: controlScope.${field} and experimentScope.${field} must both be set or be empty`,
        );
    let start = control.start;
    if (!start) {
      if (spec.lookback === true) {
        if (runStartedAt === undefined) throw fail('lookback: the run has no start time yet');
        start = rfc3339(new Date(runStartedAt));
      } else {
        let intervalMs: number;
        try {
          intervalMs = parseDuration(metric.interval ?? '');
        } catch (error) {
          if (error instanceof DurationError)
            throw fail(
              `scope ${scope.name} has no start, and the metric's interval does not read: ${error.message}`,
            );
          throw error;
        }
        start = rfc3339(new Date(now.getTime() - intervalMs));
      }
    }
    const end = control.end || rfc3339(now);
    const side = (detail: typeof control, startAt: string, endAt: string): KayentaScopeRequest => ({
      scope: detail.scope,
      location: detail.region ?? '',
      step: detail.step,
      start: startAt,
      end: endAt,
    });
    scopes[scope.name] = {
      controlScope: side(control, start, end),
      experimentScope: side(experiment, experiment.start || start, experiment.end || end),
    };
  }
  const { pass, marginal } = kayentaThreshold(spec);
  return { scopes, thresholds: { pass, marginal } };
}

/** Argo's verdict on a score: at least pass is Successful, at least marginal Inconclusive, below Failed. */
export function judgeKayentaScore(
  score: number,
  threshold: KayentaThreshold,
): 'Successful' | 'Inconclusive' | 'Failed' {
  if (score >= threshold.pass) return 'Successful';
  if (score >= threshold.marginal) return 'Inconclusive';
  return 'Failed';
}

/**
 * An execution's status (Kayenta's CanaryExecutionStatusResponse) as Argo reads it: not complete is
 * Running (ask again later); complete with `result.judgeResult.score.score` is that score, cut to an
 * integer, judged by {@link judgeKayentaScore}; no `complete` or no score is an error (with Kayenta's
 * `exception` when it gave one).
 */
export function mapKayentaStatus(
  body: unknown,
  threshold: KayentaThreshold,
  executionId: string,
): ProviderMeasurement {
  const status = (typeof body === 'object' && body !== null ? body : {}) as {
    complete?: unknown;
    status?: unknown;
    exception?: unknown;
    result?: { judgeResult?: { score?: { score?: unknown } } } | null;
  };
  const metadata = { [KAYENTA_EXECUTION_METADATA]: executionId };
  if (typeof status.complete !== 'boolean')
    throw fail(`execution ${executionId}: the status has no "complete"`);
  if (!status.complete)
    return { value: null, phase: 'Running', metadata, resumeAfterMs: KAYENTA_POLL_INTERVAL_MS };
  const raw = status.result?.judgeResult?.score?.score;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) {
    const why =
      status.exception === undefined || status.exception === null
        ? ''
        : `: ${exceptionText(status.exception)}`;
    throw fail(
      `execution ${executionId} ended without a score (status ${typeof status.status === 'string' ? status.status : 'unknown'})${why}`,
    );
  }
  const score = Math.trunc(raw);
  return { value: score, raw: String(score), phase: judgeKayentaScore(score, threshold), metadata };
}

function exceptionText(exception: unknown): string {
  const details = (exception as { details?: { error?: unknown; errors?: unknown } } | null)?.details;
  if (Array.isArray(details?.errors) && details.errors.length > 0)
    return details.errors.map(String).join('; ');
  if (typeof details?.error === 'string') return details.error;
  return JSON.stringify(exception).slice(0, 200);
}

/** What Kayenta said went wrong: its `{message}` (Kayenta's error body), `error`, or the body's start. */
function kayentaMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; error?: unknown };
    if (typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
    if (typeof parsed.error === 'string' && parsed.error !== '') return parsed.error;
  } catch {
    // Not JSON (a proxy's page): its start says enough.
  }
  return body.trim().slice(0, 200) || '(empty body)';
}

function checkAnswer(response: HttpResponse, what: string, now: Date): unknown {
  if (response.status === 429)
    throw fail(
      `${what}: HTTP 429 (rate limited): ${kayentaMessage(response.body)}`,
      undefined,
      rateLimitDelayMs(response.headers, now),
    );
  if (response.status < 200 || response.status >= 300)
    throw fail(`${what}: HTTP ${response.status}: ${kayentaMessage(response.body)}`);
  try {
    return JSON.parse(response.body) as unknown;
  } catch {
    throw fail(`${what}: HTTP ${response.status}: the answer is not JSON`);
  }
}

/** Query parameters, the empty ones left out (Kayenta then uses its default account of that kind). */
function query(params: Record<string, string | undefined>): string {
  const set = Object.entries(params).filter((entry): entry is [string, string] => !!entry[1]);
  return set.length === 0 ? '' : `?${new URLSearchParams(set).toString()}`;
}

/**
 * The Kayenta provider, with Argo's fields and semantics. The first call finds the canary config's id by
 * its name (`GET <address>/canaryConfig?application=…&configurationAccountName=…`), starts a judgement
 * (`POST <address>/canary/<configId>?application=…&metricsAccountName=…&configurationAccountName=…&storageAccountName=…`
 * with {@link kayentaExecutionRequest}) and reports the measurement Running with the execution's id;
 * each later call (every {@link KAYENTA_POLL_INTERVAL_MS}) reads `GET <address>/canary/<executionId>`
 * until it is complete, then {@link mapKayentaStatus}. Any failed request is an Error measurement
 * carrying Kayenta's message (a failed poll ends that judgement; the next measurement starts another);
 * 429 also says when to ask again.
 */
export function createKayentaProvider(options: KayentaProviderOptions = {}): MetricProvider {
  const send = (url: string, method: 'GET' | 'POST', body?: string): Promise<HttpResponse> =>
    sendHttpRequest({
      provider: TYPE,
      url,
      method,
      headers: {
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body }),
      timeoutMs: options.timeoutMs ?? KAYENTA_DEFAULT_TIMEOUT_MS,
      ...(options.policy && { policy: options.policy }),
    });

  async function start(
    spec: KayentaMetric,
    metric: Metric,
    run: AnalysisRun,
    ctx: MeasureContext,
    base: string,
  ) {
    const application = spec.application ?? '';
    const configName = spec.canaryConfigName ?? '';
    if (application.trim() === '' || configName.trim() === '')
      throw fail('application and canaryConfigName are required');
    const request = kayentaExecutionRequest(spec, metric, run.status?.startedAt, ctx.now);
    const configs = checkAnswer(
      await send(
        `${base}/canaryConfig${query({ application, configurationAccountName: spec.configurationAccountName })}`,
        'GET',
      ),
      'listing canary configs',
      ctx.now,
    );
    if (!Array.isArray(configs)) throw fail('listing canary configs: the answer is not a list');
    const config = (configs as Array<{ id?: unknown; name?: unknown } | null>).find(
      (c) => c?.name === configName,
    );
    if (typeof config?.id !== 'string' || config.id === '')
      throw fail(
        `canary config ${JSON.stringify(configName)} not found for application ${JSON.stringify(application)}`,
      );
    const started = checkAnswer(
      await send(
        `${base}/canary/${encodeURIComponent(config.id)}${query({
          application,
          metricsAccountName: spec.metricsAccountName,
          configurationAccountName: spec.configurationAccountName,
          storageAccountName: spec.storageAccountName,
        })}`,
        'POST',
        JSON.stringify(request),
      ),
      'starting the canary judgement',
      ctx.now,
    );
    const id = (started as { canaryExecutionId?: unknown } | null)?.canaryExecutionId;
    if (typeof id !== 'string' || id === '')
      throw fail('starting the canary judgement: no canaryExecutionId in the answer');
    return id;
  }

  return {
    type: TYPE,
    async measure(metric: Metric, run, ctx) {
      const spec = metric.provider.kayenta;
      if (spec === undefined) throw fail('no kayenta provider on this metric', metric.name);
      try {
        const address = spec.address?.trim() ?? '';
        if (address === '') throw fail('address is required');
        const base = address.replace(/\/+$/, '');
        const threshold = kayentaThreshold(spec);
        let id = ctx.inFlight?.metadata?.[KAYENTA_EXECUTION_METADATA];
        if (id === undefined) {
          id = await start(spec, metric, run, ctx, base);
          return {
            value: null,
            phase: 'Running',
            metadata: { [KAYENTA_EXECUTION_METADATA]: id },
            resumeAfterMs: KAYENTA_POLL_INTERVAL_MS,
          };
        }
        const status = checkAnswer(
          await send(
            `${base}/canary/${encodeURIComponent(id)}${query({ storageAccountName: spec.storageAccountName })}`,
            'GET',
          ),
          `reading execution ${id}`,
          ctx.now,
        );
        return mapKayentaStatus(status, threshold, id);
      } catch (error) {
        if (error instanceof MetricProviderError) throw fail(error.reason, metric.name, error.retryAfterMs);
        throw error;
      }
    },
  };
}
