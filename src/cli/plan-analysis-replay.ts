// `rollgate plan --analysis TEMPLATE --replay`'s edge: reads the template file, the past AnalysisRuns (or a Prometheus range), replays, prints.
import { readFile } from 'node:fs/promises';
import { checkAnalysisTemplate } from '../analysis/check-analysis-template.ts';
import { replayPastRun, selectPastRuns } from '../analysis/replay/replay-past-runs.ts';
import { replayRange } from '../analysis/replay/replay-range.ts';
import { formatReplayReport, type ReplayReport } from '../analysis/replay/format-replay-report.ts';
import type { Clock } from '../clock/clock.ts';
import {
  analysisRunSchema,
  analysisTemplateSchema,
  clusterAnalysisTemplateSchema,
  type AnalysisRun,
  type AnalysisTemplate,
  type Argument,
  type ClusterAnalysisTemplate,
} from '../manifest/analysis.ts';
import { parseDuration } from '../manifest/duration.ts';
import { ROLLGATE_API } from '../manifest/driven-api.ts';
import { parseManifests } from '../manifest/manifest.ts';
import { validateManifests } from '../manifest/validate.ts';
import { DEFAULT_REPLAY_RUNS, ReplayFlagError, type ReplayFlags } from './plan-replay-flags.ts';
import { PlanInputError, type PlanOutput } from './plan-rollouts.ts';

export { ReplayFlagError } from './plan-replay-flags.ts';

type Template = AnalysisTemplate | ClusterAnalysisTemplate;

async function readTemplate(file: string): Promise<Template> {
  const text = await readFile(file, 'utf8');
  const report = validateManifests([{ file, text }]);
  const problems = report.objects.flatMap((o) =>
    o.errors.map((e) => `${o.file}:${e.line}:${e.col} ${e.path}: ${e.message}`),
  );
  if (problems.length > 0) throw new PlanInputError(problems.join('\n'));
  const objects = parseManifests(text, file).objects.filter(
    (o) => o.kind === 'AnalysisTemplate' || o.kind === 'ClusterAnalysisTemplate',
  );
  if (objects.length !== 1)
    throw new PlanInputError(
      `${file}: holds ${objects.length} AnalysisTemplates or ClusterAnalysisTemplates; --analysis takes a file with one`,
    );
  const object = objects[0] as { kind?: string; value: unknown };
  const parsed = (
    object.kind === 'AnalysisTemplate' ? analysisTemplateSchema : clusterAnalysisTemplateSchema
  ).safeParse(object.value);
  if (!parsed.success) throw new PlanInputError(`${file}: ${parsed.error.message}`);
  // Conditions are compiled here (validate does not yet): a replay of a condition that does not parse says nothing.
  const issues = checkAnalysisTemplate(parsed.data.spec);
  if (issues.length > 0)
    throw new PlanInputError(issues.map((issue) => `${file}: ${issue.path}: ${issue.message}`).join('\n'));
  if ((parsed.data.spec.templates?.length ?? 0) > 0)
    throw new PlanInputError(
      `${file}: ${parsed.data.kind} ${parsed.data.metadata.name} names other templates (spec.templates); a replay reads one file: put the metrics in it`,
    );
  return parsed.data;
}

/** RFC 3339, or a duration meaning that long before `now` (`2h`, `30m`). */
export function replayTime(text: string, flag: string, now: Date): Date {
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return new Date(ms);
  } else {
    try {
      return new Date(now.getTime() - parseDuration(text));
    } catch {
      // reported below
    }
  }
  throw new ReplayFlagError(
    `${flag} ${JSON.stringify(text)} must be an RFC 3339 time (2026-12-04T10:00:00Z) or a duration ago (2h)`,
  );
}

function replayArguments(flags: ReplayFlags): Argument[] {
  return (flags.argument ?? []).map((text) => {
    const eq = text.indexOf('=');
    if (eq <= 0) throw new ReplayFlagError(`--argument ${JSON.stringify(text)} must be NAME=VALUE`);
    return { name: text.slice(0, eq), value: text.slice(eq + 1) };
  });
}

function runCount(flags: ReplayFlags): number {
  if (flags.runs === undefined) return DEFAULT_REPLAY_RUNS;
  if (!/^\d+$/.test(flags.runs) || Number(flags.runs) < 1)
    throw new ReplayFlagError(`--runs ${JSON.stringify(flags.runs)} must be a whole number of 1 or more`);
  return Number(flags.runs);
}

async function pastRuns(flags: ReplayFlags): Promise<{ runs: AnalysisRun[]; namespace: string }> {
  const [{ connectKube }, { kubeCall }] = await Promise.all([
    import('../kube/client.ts'),
    import('../kube/errors.ts'),
  ]);
  const { clients, namespace } = connectKube(flags);
  const list = (await kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace }, () =>
    clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API.group,
      version: ROLLGATE_API.version,
      namespace,
      plural: ROLLGATE_API.plurals.analysisRuns,
    }),
  )) as { items?: unknown[] };
  // A run that does not parse (hand-edited, another version) is not replayed rather than stopping the rest.
  const runs = (list.items ?? []).flatMap((item) => {
    const parsed = analysisRunSchema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
  return { runs, namespace };
}

/** Runs the replay and prints it; returns the exit code (0; errors are thrown). */
export async function runAnalysisReplay(
  flags: ReplayFlags,
  output: PlanOutput,
  clock: Clock,
): Promise<number> {
  const template = await readTemplate(flags.analysis);
  const label = `${template.kind} ${template.metadata.name}`;
  let report: ReplayReport;
  if (flags.from !== undefined) {
    const now = clock.now();
    const from = replayTime(flags.from, '--from', now);
    const to = flags.to === undefined ? now : replayTime(flags.to, '--to', now);
    let stepMs: number | undefined;
    if (flags.step !== undefined) {
      try {
        stepMs = parseDuration(flags.step);
      } catch (error) {
        throw new ReplayFlagError(`--step: ${(error as Error).message}`);
      }
    }
    const { createDefaultMetricProviders } = await import('../analysis/providers/index.ts');
    const namespace = flags.namespace ?? 'default';
    const windows = await replayRange(template, replayArguments(flags), {
      from,
      to,
      ...(stepMs !== undefined && { stepMs }),
      providers: createDefaultMetricProviders({ prometheus: { queryAtNow: true } }),
      namespace,
    });
    report = { template: label, file: flags.analysis, namespace, windows };
  } else {
    const limit = runCount(flags);
    const { runs, namespace } = await pastRuns(flags);
    const metricNames = (template.spec.metrics ?? []).map((m) => m.name);
    const selected = selectPastRuns(runs, flags.runsOf ?? template.metadata.name, metricNames, limit);
    // Oldest first: the order they happened in.
    const replays = [];
    for (const run of selected.reverse()) replays.push(await replayPastRun(template, run));
    report = { template: label, file: flags.analysis, namespace, runs: replays };
  }
  output.stdout.write(
    flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReplayReport(report),
  );
  return 0;
}
