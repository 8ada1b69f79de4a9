// Semantic checks on AnalysisTemplate / ClusterAnalysisTemplate / AnalysisRun specs whose shape is valid.
import type { AnalysisTemplateSpec, AnalysisRunSpec } from './analysis.ts';
import { OTHER_METRIC_PROVIDERS, SUPPORTED_METRIC_PROVIDERS } from './analysis.ts';
import { parseDuration } from './duration.ts';
import { metricProviderIssues } from './metric-provider-checks.ts';
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
    const providers = PROVIDERS.filter((name) => metric.provider[name] !== undefined);
    if (providers.length === 0) {
      sink.error(at('provider'), `must set one provider (${SUPPORTED_METRIC_PROVIDERS.join(', ')})`);
    } else if (providers.length > 1) {
      sink.error(at('provider'), `must set only one provider, got ${providers.join(' and ')}`);
    }
    for (const issue of metricProviderIssues(metric)) sink.error(at(...issue.path), issue.message);
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
