// Checks of a metric's provider block that need more than its shape: rangeQuery bounds and step, one authentication method with its fields.
import type { Metric, MetricAuthentication } from './analysis.ts';
import { parseDuration } from './duration.ts';
import { authenticationMethods } from './metric-authentication.ts';
import { checkTimeExpression } from './time-expression.ts';

/** One problem, at a path relative to the metric (`['provider', 'prometheus', 'rangeQuery', 'step']`). */
export interface MetricProviderIssue {
  path: Array<string | number>;
  message: string;
}

// Checked again once the run is built, when the placeholder has its value.
const PLACEHOLDER = /\{\{.+\}\}/;

function authenticationIssues(
  auth: MetricAuthentication | undefined,
  at: Array<string | number>,
): MetricProviderIssue[] {
  const methods = authenticationMethods(auth);
  if (methods.length > 1)
    return [
      { path: at, message: `only one of sigv4, oauth2, basicAuth may be set, found ${methods.join(', ')}` },
    ];
  const issues: MetricProviderIssue[] = [];
  if (auth?.oauth2 !== undefined)
    for (const field of ['tokenUrl', 'clientId', 'clientSecret'] as const)
      if (!auth.oauth2[field]) issues.push({ path: [...at, 'oauth2', field], message: 'is required' });
  if (auth?.basicAuth !== undefined)
    for (const field of ['username', 'password'] as const)
      if (!auth.basicAuth[field]) issues.push({ path: [...at, 'basicAuth', field], message: 'is required' });
  return issues;
}

function rangeQueryIssues(metric: Metric): MetricProviderIssue[] {
  const range = metric.provider.prometheus?.rangeQuery;
  if (range === undefined) return [];
  const at = ['provider', 'prometheus', 'rangeQuery'];
  const issues: MetricProviderIssue[] = [];
  for (const field of ['start', 'end'] as const) {
    if (PLACEHOLDER.test(range[field])) continue;
    try {
      checkTimeExpression(range[field]);
    } catch (error) {
      issues.push({ path: [...at, field], message: (error as Error).message });
    }
  }
  if (!PLACEHOLDER.test(range.step)) {
    try {
      if (parseDuration(range.step) <= 0)
        issues.push({ path: [...at, 'step'], message: 'must be more than 0' });
    } catch (error) {
      issues.push({ path: [...at, 'step'], message: (error as Error).message });
    }
  }
  return issues;
}

/**
 * What a run of `metric` would trip over in its provider block: a rangeQuery whose start/end are not
 * time expressions or whose step is no positive duration (unless an `{{args.x}}` is still in it),
 * an `authentication` with more than one method or without a method's required fields.
 */
export function metricProviderIssues(metric: Metric): MetricProviderIssue[] {
  return [
    ...rangeQueryIssues(metric),
    ...authenticationIssues(metric.provider.prometheus?.authentication, [
      'provider',
      'prometheus',
      'authentication',
    ]),
    ...authenticationIssues(metric.provider.web?.authentication, ['provider', 'web', 'authentication']),
  ];
}
