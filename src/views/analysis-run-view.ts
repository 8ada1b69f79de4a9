// A read-only view of a rollout's AnalysisRuns for `rollgate status`: each run's metrics and their last measurements.
import { ANALYSIS_TYPE_LABEL, STEP_INDEX_LABEL } from '../rollout/rollout-action.ts';
import { analysisRunStatusSchema, type Measurement, type MetricResult } from '../manifest/analysis.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { measuredNumber } from './measured-number.ts';
import type { RolloutKey } from '../reconciler/observed-state-reader.ts';

/** How many of a metric's most recent measurements the view keeps. */
export const VIEW_MEASUREMENTS = 3;

/** One measurement as shown. */
export interface MeasurementView {
  phase: string;
  value?: string;
  /** `value` as one number, when it is one (what the dashboard's chart plots). */
  number?: number;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}

/** One metric of a run as shown: its phase, counters and last measurements (oldest first). */
export interface AnalysisMetricView {
  name: string;
  phase: string;
  count: number;
  successful: number;
  failed: number;
  inconclusive: number;
  error: number;
  dryRun?: boolean;
  message?: string;
  /** The conditions that judge each measurement (from the run's spec), when it has them. */
  successCondition?: string;
  failureCondition?: string;
  lastMeasurements: MeasurementView[];
}

/** One AnalysisRun as shown. */
export interface AnalysisRunView {
  name: string;
  phase: string;
  message?: string;
  terminated: boolean;
  /** `Background`, `Step` (from the rollgate.dev/analysis-type label), when known. */
  type?: string;
  step?: number;
  metrics: AnalysisMetricView[];
}

interface RunObject {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string }>;
    creationTimestamp?: string;
  };
  spec?: {
    terminate?: boolean;
    metrics?: Array<{ name?: string; successCondition?: unknown; failureCondition?: unknown }>;
  };
  status?: unknown;
}

function measurementView(m: Measurement): MeasurementView {
  const number = measuredNumber(m.value);
  return {
    phase: m.phase,
    ...(m.value !== undefined && { value: m.value }),
    ...(number !== undefined && { number }),
    ...(m.message !== undefined && { message: m.message }),
    ...(m.startedAt !== undefined && { startedAt: m.startedAt }),
    ...(m.finishedAt !== undefined && { finishedAt: m.finishedAt }),
  };
}

function metricView(result: MetricResult, keep: number): AnalysisMetricView {
  return {
    name: result.name,
    phase: result.phase,
    count: result.count ?? 0,
    successful: result.successful ?? 0,
    failed: result.failed ?? 0,
    inconclusive: result.inconclusive ?? 0,
    error: result.error ?? 0,
    ...(result.dryRun === true && { dryRun: true }),
    ...(result.message !== undefined && { message: result.message }),
    lastMeasurements: (result.measurements ?? []).slice(-keep).map(measurementView),
  };
}

/**
 * The view of one AnalysisRun object as read from the cluster (plain JSON). Metrics without a result
 * yet are shown Pending with no measurements; a status that does not parse shows the run's phase as
 * `Unknown` rather than failing the whole status command.
 */
export function buildAnalysisRunView(object: unknown, keep = VIEW_MEASUREMENTS): AnalysisRunView {
  const run = (typeof object === 'object' && object !== null ? object : {}) as RunObject;
  const parsed = analysisRunStatusSchema.safeParse(run.status ?? {});
  const status = parsed.success ? parsed.data : undefined;
  const results = status?.metricResults ?? [];
  const metricNames = (run.spec?.metrics ?? []).map((m) => m.name ?? '').filter((n) => n !== '');
  const metrics = metricNames.map((name) => {
    const result = results.find((r) => r.name === name);
    return result ? metricView(result, keep) : metricView({ name, phase: 'Pending' }, keep);
  });
  for (const result of results)
    if (!metricNames.includes(result.name)) metrics.push(metricView(result, keep));
  for (const metric of metrics) {
    const spec = run.spec?.metrics?.find((m) => m.name === metric.name);
    if (typeof spec?.successCondition === 'string') metric.successCondition = spec.successCondition;
    if (typeof spec?.failureCondition === 'string') metric.failureCondition = spec.failureCondition;
  }
  const labels = run.metadata?.labels ?? {};
  const step = Number(labels[STEP_INDEX_LABEL]);
  return {
    name: run.metadata?.name ?? '',
    phase: parsed.success ? (status?.phase ?? 'Pending') : 'Unknown',
    ...(status?.message !== undefined && { message: status.message }),
    terminated: run.spec?.terminate === true,
    ...(labels[ANALYSIS_TYPE_LABEL] !== undefined && { type: labels[ANALYSIS_TYPE_LABEL] }),
    ...(Number.isInteger(step) && labels[STEP_INDEX_LABEL] !== undefined && { step }),
    metrics,
  };
}

/**
 * Reads the AnalysisRuns owned (ownerReference uid) by the rollout and builds their views, oldest
 * first; they live in the Rollout's own group (`api`). No AnalysisRun CRD installed → no runs.
 */
export async function readAnalysisRunViews(
  clients: Pick<ObjectReadClients, 'custom'>,
  key: RolloutKey,
  rolloutUid: string,
  keep = VIEW_MEASUREMENTS,
  api: DrivenApi = ROLLGATE_API,
): Promise<AnalysisRunView[]> {
  let items: RunObject[];
  try {
    const list = (await kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace: key.namespace }, () =>
      clients.custom.listNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace: key.namespace,
        plural: api.plurals.analysisRuns,
      }),
    )) as { items?: RunObject[] };
    items = list.items ?? [];
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  return items
    .filter((item) => (item.metadata?.ownerReferences ?? []).some((ref) => ref.uid === rolloutUid))
    .sort((a, b) =>
      String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')),
    )
    .map((item) => buildAnalysisRunView(item, keep));
}

/** The runs as text lines for `rollgate status`: a run per line, then its metrics and last measurements. */
export function formatAnalysisRunViews(views: readonly AnalysisRunView[]): string[] {
  if (views.length === 0) return [];
  const lines = ['AnalysisRuns:'];
  for (const run of views) {
    const kind =
      run.type === 'Background' ? ' (background)' : run.step !== undefined ? ` (step ${run.step})` : '';
    const terminated = run.terminated ? ' [terminated]' : '';
    lines.push(`  ${run.name}${kind}  ${run.phase}${terminated}${run.message ? `: ${run.message}` : ''}`);
    for (const metric of run.metrics) {
      const counts = `count ${metric.count}, ok ${metric.successful}, failed ${metric.failed}, inconclusive ${metric.inconclusive}, error ${metric.error}`;
      lines.push(`    ${metric.name}${metric.dryRun ? ' (dry run)' : ''}  ${metric.phase}  (${counts})`);
      for (const m of metric.lastMeasurements) {
        const at = m.finishedAt ?? m.startedAt;
        const value = m.value !== undefined ? ` ${m.value}` : '';
        const message = m.message !== undefined ? ` — ${m.message}` : '';
        lines.push(`      ${at ?? '-'}  ${m.phase}${value}${message}`);
      }
    }
  }
  return lines;
}
