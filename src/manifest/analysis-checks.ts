// Semantic checks on AnalysisTemplate / ClusterAnalysisTemplate / AnalysisRun specs whose shape is valid.
import type { AnalysisTemplateSpec, AnalysisRunSpec, JobMetric } from './analysis.ts';
import { OTHER_METRIC_PROVIDERS, SUPPORTED_METRIC_PROVIDERS } from './analysis.ts';
import { parseDuration } from './duration.ts';
import type { FieldPath } from './field-path.ts';
import { metricProviderIssues } from './metric-provider-checks.ts';
import { PodFieldReader } from './pod-field-reader.ts';
import { checkObjectLabels, checkPodTemplate } from './pod-template-checks.ts';
import type { IssueCollector } from './validation-issue.ts';

const INTEGER_TEXT = /^-?\d+$/;
const PLACEHOLDER = /\{\{.+\}\}/;
const PROVIDERS = [...SUPPORTED_METRIC_PROVIDERS, ...OTHER_METRIC_PROVIDERS];

/** Checks metric names, durations, int-or-string limits, providers (rangeQuery, authentication) and args of an analysis spec. */
export function checkAnalysisSpec(spec: AnalysisTemplateSpec | AnalysisRunSpec, sink: IssueCollector): void {
  const metricNames = new Map<string, number>();
  (spec.metrics ?? []).forEach((metric, index) => {
    const at = (...rest: Array<string | number>) => ['spec', 'metrics', index, ...rest];
    const first = metricNames.get(metric.name);
    if (first !== undefined) {
      sink.error(at('name'), `duplicate metric name ${JSON.stringify(metric.name)} (also metrics[${first}])`);
    } else {
      metricNames.set(metric.name, index);
    }
    for (const field of ['interval', 'initialDelay'] as const) {
      const value = metric[field];
      if (value === undefined || (typeof value === 'string' && PLACEHOLDER.test(value))) continue;
      try {
        parseDuration(value);
      } catch (err) {
        sink.error(at(field), err instanceof Error ? err.message : String(err));
      }
    }
    for (const [field, negativeAllowed] of [
      ['count', false],
      // A negative limit means "no limit" (Argo documents failureLimit: -1).
      ['failureLimit', true],
      ['inconclusiveLimit', true],
      ['consecutiveErrorLimit', true],
      ['consecutiveSuccessLimit', false],
    ] as const) {
      const value = metric[field];
      if (value === undefined || (typeof value === 'string' && PLACEHOLDER.test(value))) continue;
      const n = typeof value === 'number' ? value : INTEGER_TEXT.test(value) ? Number(value) : NaN;
      if (Number.isNaN(n) || (n < 0 && !negativeAllowed)) {
        const kind = negativeAllowed ? 'an integer (negative: no limit)' : 'a non-negative integer';
        sink.error(
          at(field),
          `must be ${kind} or an argument placeholder like "{{args.${field}}}", got ${JSON.stringify(value)}`,
        );
      }
    }
    if (metric.provider.job !== undefined) checkJobMetric(metric.provider.job, at('provider', 'job'), sink);
    const providers = PROVIDERS.filter((name) => metric.provider[name] !== undefined);
    if (providers.length === 0) {
      sink.error(at('provider'), `must set one provider (${SUPPORTED_METRIC_PROVIDERS.join(', ')})`);
    } else if (providers.length > 1) {
      sink.error(at('provider'), `must set only one provider, got ${providers.join(' and ')}`);
    }
    for (const issue of metricProviderIssues(metric))
      if (issue.severity === 'warning') sink.warn(at(...issue.path), issue.message);
      else sink.error(at(...issue.path), issue.message);
  });

  const argNames = new Map<string, number>();
  (spec.args ?? []).forEach((arg, index) => {
    const first = argNames.get(arg.name);
    if (first !== undefined) {
      sink.error(
        ['spec', 'args', index, 'name'],
        `duplicate argument ${JSON.stringify(arg.name)} (also args[${first}])`,
      );
    } else {
      argNames.set(arg.name, index);
    }
    if (arg.value !== undefined && arg.valueFrom !== undefined) {
      sink.error(['spec', 'args', index], 'must set only one of value and valueFrom');
    }
  });
}

// JobSpec fields the API server requires to be >= 0.
const NON_NEGATIVE_JOB_FIELDS = [
  'parallelism',
  'completions',
  'backoffLimit',
  'activeDeadlineSeconds',
  'ttlSecondsAfterFinished',
] as const;

/**
 * The Job a job metric creates, as the API server will judge it: its labels and annotations, its counts,
 * and its pod template (restartPolicy OnFailure or Never). Argument placeholders pass: they are filled in
 * before the Job is created.
 */
function checkJobMetric(job: JobMetric, at: FieldPath, sink: IssueCollector): void {
  checkObjectLabels(job.metadata, [...at, 'metadata'], sink, { templated: true });
  const read = new PodFieldReader(sink, true);
  for (const field of NON_NEGATIVE_JOB_FIELDS)
    read.integerAtLeast(job.spec[field], [...at, 'spec', field], 0);
  checkPodTemplate(job.spec.template, [...at, 'spec', 'template'], sink, { owner: 'Job', templated: true });
}
