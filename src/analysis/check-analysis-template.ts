// Static checks of an AnalysisTemplate spec before any run exists: conditions compile, settings read, provider known.
import {
  SUPPORTED_METRIC_PROVIDERS,
  type AnalysisTemplateSpec,
  type Metric,
  type MetricAuthentication,
} from '../manifest/analysis.ts';
import { parseDuration } from '../manifest/duration.ts';
import { authenticationMethods } from './metric-authentication.ts';
import { checkTimeExpression } from './time-expression.ts';
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

// What a provider's `authentication` needs to work: one method, and that method's required fields.
function checkAuthentication(auth: MetricAuthentication | undefined, at: string): AnalysisTemplateIssue[] {
  const methods = authenticationMethods(auth);
  if (methods.length > 1)
    return [
      { path: at, message: `only one of sigv4, oauth2, basicAuth may be set, found ${methods.join(', ')}` },
    ];
  const issues: AnalysisTemplateIssue[] = [];
  if (auth?.oauth2 !== undefined)
    for (const field of ['tokenUrl', 'clientId', 'clientSecret'] as const)
      if (!auth.oauth2[field]) issues.push({ path: `${at}.oauth2.${field}`, message: 'required' });
  if (auth?.basicAuth !== undefined)
    for (const field of ['username', 'password'] as const)
      if (!auth.basicAuth[field]) issues.push({ path: `${at}.basicAuth.${field}`, message: 'required' });
  return issues;
}

// A rangeQuery's bounds evaluate to times and its step is a duration (unless an {{args.x}} is still in them).
function checkRangeQuery(metric: Metric, at: string): AnalysisTemplateIssue[] {
  const range = metric.provider.prometheus?.rangeQuery;
  if (range === undefined) return [];
  const issues: AnalysisTemplateIssue[] = [];
  for (const field of ['start', 'end'] as const) {
    if (referencedArgs(range[field]).size > 0) continue;
    try {
      checkTimeExpression(range[field]);
    } catch (error) {
      issues.push({ path: `${at}.${field}`, message: (error as Error).message });
    }
  }
  if (referencedArgs(range.step).size === 0) {
    try {
      if (parseDuration(range.step) <= 0) issues.push({ path: `${at}.step`, message: 'must be more than 0' });
    } catch (error) {
      issues.push({ path: `${at}.step`, message: (error as Error).message });
    }
  }
  return issues;
}

/**
 * Checks what a run would trip over later: each condition compiles (unless it still holds an
 * `{{args.x}}` placeholder, checked once the run is built), interval/count/limits read as numbers
 * (same exception), exactly one provider is set and it is supported, every `{{args.x}}` is declared,
 * a rangeQuery's start/end/step read, an `authentication` sets one method with its required fields.
 */
export function checkAnalysisTemplate(spec: AnalysisTemplateSpec): AnalysisTemplateIssue[] {
  const issues: AnalysisTemplateIssue[] = [];
  const declared = new Set((spec.args ?? []).map((a) => a.name));
  spec.metrics.forEach((metric, i) => {
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
    issues.push(...checkRangeQuery(metric, `${at}.provider.prometheus.rangeQuery`));
    issues.push(
      ...checkAuthentication(
        metric.provider.prometheus?.authentication,
        `${at}.provider.prometheus.authentication`,
      ),
      ...checkAuthentication(metric.provider.web?.authentication, `${at}.provider.web.authentication`),
    );
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
