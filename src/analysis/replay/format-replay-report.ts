// Text for `rollgate plan --analysis --replay`: per past run (or window), what it was and what the template would have made of it.
import type { PastRunReplay } from './replay-past-runs.ts';
import type { RangeWindowReplay } from './replay-range.ts';
import type { DecidingMeasurement, ReplayOutcome } from './replay-analysis-run.ts';

/** What the CLI prints (and `-o json` writes as is). */
export interface ReplayReport {
  template: string;
  file: string;
  namespace: string;
  /** Replayed past runs (recorded measurements) … */
  runs?: PastRunReplay[];
  /** … or windows of a Prometheus range. */
  windows?: RangeWindowReplay[];
}

function at(deciding: DecidingMeasurement | undefined): string {
  if (deciding === undefined) return '';
  const value = deciding.value === undefined ? '' : `, value ${deciding.value}`;
  return ` at measurement ${deciding.index} of "${deciding.metric}" (${deciding.time}${value})`;
}

function verdict(replay: Omit<ReplayOutcome, 'status'> | undefined, error: string | undefined): string[] {
  if (replay === undefined) return [`  replay:   cannot run: ${error ?? 'unknown error'}`];
  const ended = replay.terminated && replay.phase === 'Successful' ? ' (its measurements ended)' : '';
  const lines = [`  replay:   ${replay.phase}${at(replay.deciding)}${ended}`];
  if (replay.phase !== 'Successful' && replay.message !== undefined)
    lines.push(`            ${replay.message}`);
  if (replay.deciding?.message !== undefined && replay.phase !== 'Successful')
    lines.push(`            measurement: ${replay.deciding.message}`);
  for (const note of replay.notes) lines.push(`  note:     ${note}`);
  return lines;
}

/** One block per run (Rollout, revision, start; recorded phase; replayed phase and the deciding measurement), then a count of changed verdicts. */
export function formatReplayReport(report: ReplayReport): string {
  const head = `Replaying ${report.template} (${report.file})`;
  const lines: string[] = [];
  if (report.windows !== undefined) {
    lines.push(`${head} over ${report.windows.length} window(s) of Prometheus data:`, '');
    for (const window of report.windows) {
      lines.push(`${window.start} – ${window.end}`, ...verdict(window.replay, window.error), '');
    }
    const failed = report.windows.filter(
      (w) => w.replay !== undefined && w.replay.phase !== 'Successful',
    ).length;
    lines.push(`${failed} of ${report.windows.length} window(s) would not have passed.`);
    return `${lines.join('\n')}\n`;
  }
  const runs = report.runs ?? [];
  if (runs.length === 0)
    return `${head}: no past AnalysisRun of this template in namespace ${report.namespace}\n`;
  lines.push(`${head} against ${runs.length} past AnalysisRun(s) in ${report.namespace}:`, '');
  for (const run of runs) {
    const where = [
      run.rollout !== undefined ? `Rollout ${run.rollout}` : undefined,
      run.revision !== undefined ? `revision ${run.revision}` : undefined,
      run.startedAt !== undefined ? `started ${run.startedAt}` : undefined,
    ].filter((part) => part !== undefined);
    lines.push(`${run.run}${where.length > 0 ? ` (${where.join(', ')})` : ''}`);
    lines.push(`  recorded: ${run.recorded.phase ?? 'unknown'}`);
    lines.push(...verdict(run.replay, run.error), '');
  }
  const changed = runs.filter((r) => r.replay !== undefined && r.replay.phase !== r.recorded.phase).length;
  lines.push(`${changed} of ${runs.length} run(s) would have ended differently.`);
  return `${lines.join('\n')}\n`;
}
