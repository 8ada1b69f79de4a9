// Static checks of an AnalysisTemplate spec before any run exists: conditions compile, settings read, provider known.
import { SUPPORTED_METRIC_PROVIDERS, type AnalysisTemplateSpec } from '../manifest/analysis.ts';
import { metricProviderIssues } from '../manifest/metric-provider-checks.ts';
import { compileMetricConditions } from './evaluate-measurement.ts';
import { metricSettings } from './metric-settings.ts';
import { metricProviderKeys } from './providers/metric-provider.ts';
import { referencedArgs } from './substitute-args.ts';

/** One problem found in a template, with the field path it concerns. */
export interface AnalysisTemplateIssue {
  path: string;
  message: string;
}

// Widened to string so any provider key can be looked up.
const SUPPORTED: readonly string[] = SUPPORTED_METRIC_PROVIDERS;

/**
 * Checks what a run would trip over later: each condition compiles (unless it still holds an
 * `{{args.x}}` placeholder, checked once the run is built), interval/count/limits read as numbers
 * (same exception), exactly one provider is set and it is supported, every `{{args.x}}` is declared,
 * a rangeQuery's start/end/step read, an `authentication` sets one method with its required fields.
 */
export function checkAnalysisTemplate(spec: AnalysisTemplateSpec): AnalysisTemplateIssue[] {
  const issues: AnalysisTemplateIssue[] = [];
  const declared = new Set((spec.args ?? []).map((a) => a.name));
  (spec.metrics ?? []).forEach((metric, i) => {
    const at = `spec.metrics[${i}]`;
    for (const field of ['successCondition', 'failureCondition'] as const) {
      const condition = metric[field];
      if (condition === undefined || referencedArgs(condition).size > 0) continue;
      try {
        compileMetricConditions({ [field]: condition });
      } catch (error) {
        issues.push({ path: `${at}.${field}`, message: (error as Error).message });
      }
    }
    // Every field metricSettings reads.
    const timing = [
      metric.interval,
      metric.initialDelay,
      metric.count,
      metric.failureLimit,
      metric.inconclusiveLimit,
      metric.consecutiveErrorLimit,
      metric.consecutiveSuccessLimit,
    ];
    if (referencedArgs(timing).size === 0) {
      try {
        metricSettings(metric);
      } catch (error) {
        issues.push({ path: at, message: (error as Error).message });
      }
    }
    const providers = metricProviderKeys(metric);
    if (providers.length !== 1) {
      issues.push({
        path: `${at}.provider`,
        message: `exactly one provider must be set, found ${providers.length === 0 ? 'none' : providers.join(', ')}`,
      });
    } else if (!SUPPORTED.includes(providers[0] as string)) {
      issues.push({
        path: `${at}.provider.${providers[0]}`,
        message: `provider "${providers[0]}" is not supported yet (supported: ${SUPPORTED.join(', ')})`,
      });
    }
    // Warnings are for `rollgate validate`; what is checked here stops a run.
    for (const issue of metricProviderIssues(metric))
      if (issue.severity !== 'warning')
        issues.push({ path: `${at}.${issue.path.join('.')}`, message: issue.message });
    for (const name of referencedArgs(metric)) {
      if (!declared.has(name))
        issues.push({
          path: at,
          message: `{{args.${name}}} is used but spec.args does not declare "${name}"`,
        });
    }
  });
  return issues;
}
