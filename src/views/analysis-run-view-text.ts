// A rollout's AnalysisRuns as `rollgate status` shows them: the view's shape and its text. Apart from
// analysis-run-view.ts, which builds the view with the AnalysisRun schema (zod): the status command
// loads that only when it reads runs.

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
