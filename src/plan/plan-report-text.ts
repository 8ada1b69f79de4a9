// `rollgate plan` output: each Rollout's change as text for a terminal or as a Markdown table for a pull-request comment.
import type { ChangePlan, PlannedStep } from './plan-change.ts';

/** One Rollout of the files, the version it was compared with, and its plan. */
export interface PlanReport {
  /** The file the Rollout was read from: for a rendered one, the kustomization of its app. */
  file: string;
  /** The Rollout is the output of rendering the kustomization `file` (`rollgate plan` of a kustomization's input). */
  rendered?: boolean;
  /** What the previous version was read from: `HEAD~1` (a Git ref), `cluster`, or `none`. */
  against: string;
  plan: ChangePlan;
}

/** `0s`, `45s`, `10m`, `1h30m`, `2d3h`: the largest two units, none of them zero. */
export function formatDuration(ms: number): string {
  let seconds = Math.round(ms / 1000);
  if (seconds === 0) return '0s';
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const count = Math.floor(seconds / size);
    seconds -= count * size;
    if (count > 0) parts.push(`${count}${unit}`);
  }
  return parts.slice(0, 2).join('');
}

function imageChange(plan: ChangePlan): string {
  const { before, after } = plan.images;
  if (before.length === 0) return after.join(', ');
  return before.join(', ') === after.join(', ')
    ? `${after.join(', ')} (template changed elsewhere)`
    : `${before.join(', ')} → ${after.join(', ')}`;
}

/** The one-sentence verdict: what kind of change it is. */
export function changeSummary(plan: ChangePlan): string {
  const hashes =
    plan.podTemplateHash.before === undefined
      ? plan.podTemplateHash.after
      : `${plan.podTemplateHash.before} → ${plan.podTemplateHash.after}`;
  switch (plan.change) {
    case 'unchanged':
      return 'unchanged: nothing to do';
    case 'not-a-new-revision':
      return `not a new revision (pod template unchanged, ${hashes}): ${plan.specChanges.join(', ')}; no step runs`;
    case 'new-rollout':
      return `new rollout: ${imageChange(plan)} starts at full scale (${hashes}), without steps`;
    case 'new-revision':
      return `new revision: ${imageChange(plan)} (pod template ${hashes})`;
  }
}

function pauseText(step: PlannedStep): string {
  if (step.untilPromoted) return 'until promoted';
  return step.pauseMs === undefined ? '' : formatDuration(step.pauseMs);
}

/** What the minimum time assumes, and which pauses it left out. */
function minimumNote(plan: ChangePlan): string {
  const manual = plan.steps.filter((step) => step.untilPromoted).map((step) => step.index);
  const waits =
    manual.length > 0
      ? `; plus the wait for \`rollgate promote\` at step${manual.length === 1 ? '' : 's'} ${manual.join(', ')}`
      : plan.manualPromotions > 0
        ? '; plus the wait for `rollgate promote`'
        : '';
  return `pods ready at once, analysis successful at once${waits}`;
}

function stepCells(step: PlannedStep): string[] {
  return [
    String(step.index),
    step.action,
    String(step.canary),
    String(step.stable),
    `${step.weight}%`,
    pauseText(step),
    step.analysisRuns.join(', '),
    formatDuration(step.doneAfterMs),
  ];
}

const STEP_HEADER = ['STEP', 'ACTION', 'CANARY', 'STABLE', 'WEIGHT', 'PAUSE', 'ANALYSIS', 'DONE AFTER'];

function title(report: PlanReport): string {
  const against = report.against === 'none' ? 'no previous version given' : `against ${report.against}`;
  const file = report.rendered === true ? `rendered from ${report.file}` : report.file;
  return `${report.plan.namespace}/${report.plan.name} (${file}, ${against})`;
}

/** The plans as text: a verdict per Rollout, then its steps as a table and the minimum time. */
export function formatPlanText(reports: readonly PlanReport[]): string {
  const blocks = reports.map((report) => {
    const { plan } = report;
    const lines = [`rollout ${title(report)}`, `  ${changeSummary(plan)}`];
    if (plan.change !== 'new-revision') return lines.join('\n');
    if (plan.specChanges.length > 0) lines.push(`  also changed: ${plan.specChanges.join(', ')}`);
    if (plan.steps.length > 0) {
      const rows = [STEP_HEADER, ...plan.steps.map(stepCells)];
      const widths = STEP_HEADER.map((_, column) =>
        Math.max(...rows.map((row) => (row[column] ?? '').length)),
      );
      for (const row of rows)
        lines.push(`  ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ')}`.trimEnd());
    } else {
      lines.push(
        `  ${plan.strategy === 'BlueGreen' ? 'blue-green: no steps' : 'no steps: straight to 100%'}`,
      );
    }
    if (plan.backgroundAnalysisRuns.length > 0)
      lines.push(`  background analysis: ${plan.backgroundAnalysisRuns.join(', ')}`);
    lines.push(
      `  full promotion after at least ${formatDuration(plan.minPromotionMs ?? 0)} (${minimumNote(plan)})`,
    );
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}

/** Pipes and newlines would break a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The plans as Markdown, fit for a pull-request comment: a heading, the verdict and a table per Rollout. */
export function formatPlanMarkdown(reports: readonly PlanReport[]): string {
  const blocks = reports.map((report) => {
    const { plan } = report;
    const lines = [
      `### Rollout \`${plan.namespace}/${plan.name}\``,
      '',
      `${cell(title(report))}: ${changeSummary(plan)}`,
    ];
    if (plan.change !== 'new-revision') return lines.join('\n');
    if (plan.specChanges.length > 0) lines.push('', `Also changed: ${plan.specChanges.join(', ')}`);
    if (plan.steps.length > 0) {
      lines.push(
        '',
        '| Step | Action | Canary | Stable | Weight | Pause | Analysis | Done after |',
        '| ---: | --- | ---: | ---: | ---: | --- | --- | ---: |',
        ...plan.steps.map((step) => `| ${stepCells(step).map(cell).join(' | ')} |`),
      );
    }
    if (plan.backgroundAnalysisRuns.length > 0)
      lines.push('', `Background analysis: ${plan.backgroundAnalysisRuns.join(', ')}`);
    lines.push(
      '',
      `**Full promotion after at least ${formatDuration(plan.minPromotionMs ?? 0)}** (${minimumNote(plan)}).`,
    );
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}
