// Reconciles one AnalysisRun: plan, take the due measurements through providers, record, re-plan.
import { nextLook } from '../clock/next-look.ts';
import type { Logger } from '../log/logger.ts';
import { silentLogger } from '../log/logger.ts';
import type { AnalysisRun, AnalysisRunStatus, Measurement, Metric } from '../manifest/analysis.ts';
import { resolveMetricSecrets, type SecretResolver } from './build-analysis-run.ts';
import { evaluateMeasurement } from './evaluate-measurement.ts';
import { authenticationSecrets } from '../manifest/metric-authentication.ts';
import { planAnalysisRun } from './plan-analysis-run.ts';
import type { MetricProviderRegistry, ProviderMeasurement } from './providers/metric-provider.ts';
import { MetricProviderError } from './providers/metric-provider-error.ts';
import { recordMeasurement } from './record-measurement.ts';
import { secretScrubber } from './secret-scrubber.ts';

/** What {@link reconcileAnalysisRun} needs; everything with I/O is injected. */
export interface AnalysisRunDeps {
  providers: MetricProviderRegistry;
  now: Date;
  resolveSecret?: SecretResolver;
  logger?: Logger;
}

/** The run's next status (to write with the run's resourceVersion) and when to reconcile it again. */
export interface AnalysisRunOutcome {
  status: AnalysisRunStatus;
  requeueAfterMs?: number;
  /** The metrics measured in this pass (for logs and tests). */
  measured: string[];
}

// What is kept of a measurement's value and message: enough to read a result or an error, never a
// whole response body (a provider pointed at a metadata service must not store its answer).
const MAX_STORED_VALUE = 256;
const MAX_STORED_MESSAGE = 512;

type Scrub = (text: string) => string;

/**
 * When a metric is due again as soon as it was measured (a zero or tiny interval, a measurement still in
 * flight): look again after this long rather than at once, so such a metric is measured about once a
 * second instead of in a tight loop against its provider.
 */
export const DUE_AGAIN_REQUEUE_MS = 1_000;

function keep(text: string | undefined, scrubSecrets: Scrub, limit: number): string | undefined {
  if (text === undefined) return undefined;
  const out = scrubSecrets(text);
  return out.length > limit ? `${out.slice(0, limit)}… (${out.length - limit} more characters)` : out;
}

function toMeasurement(
  metric: Metric,
  answer: ProviderMeasurement,
  now: Date,
  scrubSecrets: Scrub,
): Measurement {
  const base = { ...(answer.metadata && { metadata: answer.metadata }) };
  if (answer.phase === 'Running') {
    return {
      ...base,
      phase: 'Running',
      resumeAt: new Date(now.getTime() + (answer.resumeAfterMs ?? 0)).toISOString(),
    };
  }
  const value = keep(
    answer.raw ?? (typeof answer.value === 'string' ? answer.value : JSON.stringify(answer.value)),
    scrubSecrets,
    MAX_STORED_VALUE,
  );
  if (answer.phase !== undefined) {
    const message = keep(answer.message, scrubSecrets, MAX_STORED_MESSAGE);
    return {
      ...base,
      phase: answer.phase,
      ...(value !== undefined && { value }),
      ...(message !== undefined && { message }),
    };
  }
  const verdict = evaluateMeasurement(metric, answer.value);
  const message = keep(verdict.message, scrubSecrets, MAX_STORED_MESSAGE);
  return {
    ...base,
    phase: verdict.phase,
    ...(value !== undefined && { value }),
    ...(message !== undefined && { message }),
  };
}

async function takeMeasurement(
  run: AnalysisRun,
  metric: Metric,
  deps: AnalysisRunDeps,
  logger: Logger,
): Promise<Measurement> {
  let scrubSecrets: Scrub = (text) => text;
  try {
    const resolved = await resolveMetricSecrets(metric, run, deps.resolveSecret);
    const provider = resolved.metric.provider;
    // A client secret or password written into the template is as secret as one from a Secret (a judge's sides too).
    scrubSecrets = secretScrubber([
      ...resolved.secretValues,
      ...[provider, provider.judge?.canary, provider.judge?.stable].flatMap((block) => [
        ...authenticationSecrets(block?.prometheus?.authentication),
        ...authenticationSecrets(block?.web?.authentication),
      ]),
    ]);
    const measurer = deps.providers.forMetric(resolved.metric);
    const last = run.status?.metricResults?.find((r) => r.name === metric.name)?.measurements?.at(-1);
    const inFlight = last !== undefined && last.finishedAt === undefined ? last : undefined;
    const answer = await measurer.measure(resolved.metric, run, {
      now: deps.now,
      logger,
      ...(inFlight && { inFlight }),
    });
    const measurement = toMeasurement(resolved.metric, answer, deps.now, scrubSecrets);
    // A measurement resumed from in flight keeps its start time.
    return inFlight?.startedAt !== undefined
      ? { ...measurement, startedAt: inFlight.startedAt }
      : measurement;
  } catch (error) {
    const message =
      keep(error instanceof Error ? error.message : String(error), scrubSecrets, MAX_STORED_MESSAGE) ??
      'measurement failed';
    logger.warn({ run: run.metadata.name, metric: metric.name, err: message }, 'analysis measurement failed');
    // A rate-limited provider (429) is an Error like any other, asked again no sooner than it said.
    const retryAfterMs = error instanceof MetricProviderError ? error.retryAfterMs : undefined;
    return retryAfterMs === undefined
      ? { phase: 'Error', message }
      : { phase: 'Error', message, resumeAt: new Date(deps.now.getTime() + retryAfterMs).toISOString() };
  }
}

/**
 * One reconcile of an AnalysisRun: plans at `deps.now`, ends in-flight measurements of a terminated
 * run through their provider, takes every due measurement (in parallel; a provider error or a
 * condition error becomes an Error measurement carrying the message, never a thrown error), records
 * them and plans again for the status to write and the requeue delay. Secret values used in a
 * measurement are scrubbed from what is stored. Reading and writing the AnalysisRun object is the
 * caller's job. Secrets are scrubbed in every form {@link secretScrubber} knows (case, percent-encoding,
 * base64); stored values are cut at 256 characters, messages at 512.
 */
export async function reconcileAnalysisRun(
  run: AnalysisRun,
  deps: AnalysisRunDeps,
): Promise<AnalysisRunOutcome> {
  const logger = deps.logger ?? silentLogger;
  const plan = planAnalysisRun(run, deps.now);
  let current: AnalysisRun = { ...run, status: plan.status };
  for (const name of plan.terminate) {
    const metric = run.spec.metrics.find((m) => m.name === name);
    const last = run.status?.metricResults?.find((r) => r.name === name)?.measurements?.at(-1);
    if (metric === undefined || last === undefined) continue;
    try {
      const provider = deps.providers.forMetric(metric);
      await provider.terminate?.(metric, run, last, { now: deps.now, logger });
    } catch (error) {
      logger.warn(
        { run: run.metadata.name, metric: name, err: (error as Error).message },
        'could not stop an in-flight measurement',
      );
    }
  }
  const metrics = plan.measure
    .map((name) => run.spec.metrics.find((m) => m.name === name))
    .filter((m): m is Metric => m !== undefined);
  const measurements = await Promise.all(
    metrics.map((metric) => takeMeasurement(current, metric, deps, logger)),
  );
  metrics.forEach((metric, i) => {
    current = recordMeasurement(current, metric.name, measurements[i] as Measurement, deps.now);
  });
  const next = planAnalysisRun(current, deps.now);
  const outcome: AnalysisRunOutcome = { status: next.status, measured: metrics.map((m) => m.name) };
  // Candidates of the one minimum (src/clock/next-look.ts): a metric due again at once, the next one due.
  const look = nextLook([
    next.measure.length > 0 ? { afterMs: DUE_AGAIN_REQUEUE_MS, reason: 'measurement due again' } : undefined,
    next.requeueAfterMs === undefined
      ? undefined
      : { afterMs: next.requeueAfterMs, reason: 'next measurement' },
  ]);
  if (look !== undefined) outcome.requeueAfterMs = look.afterMs;
  return outcome;
}
