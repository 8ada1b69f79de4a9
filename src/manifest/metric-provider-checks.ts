// Checks of a metric's provider block that need more than its shape: rangeQuery bounds and step, one authentication method with its fields, Datadog's query combinations.
import type { Metric, MetricAuthentication, SeriesProvider } from './analysis.ts';
import { parseDuration } from './duration.ts';
import { JudgeFieldError } from './judge-field-error.ts';
import { readJudgeFields } from './judge-fields.ts';
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

// A duration field that must read and be more than 0 (unless a placeholder is still in it).
function positiveDurationIssue(
  value: string | undefined,
  path: Array<string | number>,
): MetricProviderIssue[] {
  if (value === undefined || PLACEHOLDER.test(value)) return [];
  try {
    if (parseDuration(value) <= 0) return [{ path, message: 'must be more than 0' }];
  } catch (error) {
    return [{ path, message: (error as Error).message }];
  }
  return [];
}

/**
 * Datadog's combinations, as Argo's provider refuses them when it starts a measurement (here before any
 * run): one of query and queries; v1 takes query only and no aggregator; a formula needs queries; two
 * queries or more need a formula (Datadog would answer one column each, in no promised order);
 * a namespaced secretRef names its Secret; interval and requestTimeout are positive durations.
 */
function datadogIssues(metric: Metric): MetricProviderIssue[] {
  const dd = metric.provider.datadog;
  if (dd === undefined) return [];
  const at = ['provider', 'datadog'];
  const issues: MetricProviderIssue[] = [];
  const queries = Object.keys(dd.queries ?? {}).length;
  const hasQuery = dd.query !== undefined && dd.query.trim() !== '';
  if (!hasQuery && queries === 0) issues.push({ path: at, message: 'one of query and queries is required' });
  if (hasQuery && queries > 0) issues.push({ path: [...at, 'queries'], message: 'cannot be set with query' });
  if ((dd.apiVersion ?? 'v1') === 'v1') {
    if (queries > 0)
      issues.push({ path: [...at, 'queries'], message: 'needs apiVersion: v2 (v1 takes query only)' });
    if (dd.aggregator !== undefined)
      issues.push({ path: [...at, 'aggregator'], message: 'needs apiVersion: v2 (v1 has no aggregator)' });
  }
  if (dd.formula !== undefined && dd.formula !== '' && queries === 0)
    issues.push({ path: [...at, 'formula'], message: 'needs queries to refer to' });
  if ((dd.formula === undefined || dd.formula === '') && queries > 1)
    issues.push({ path: [...at, 'formula'], message: 'is required when queries holds more than one query' });
  if (dd.secretRef?.namespaced === true && !dd.secretRef.name)
    issues.push({ path: [...at, 'secretRef', 'name'], message: 'is required when namespaced is true' });
  issues.push(...positiveDurationIssue(dd.interval, [...at, 'interval']));
  issues.push(...positiveDurationIssue(dd.requestTimeout, [...at, 'requestTimeout']));
  return issues;
}

function seriesProviderKeys(side: SeriesProvider): string[] {
  return Object.entries(side)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k]) => k);
}

/**
 * A judge's two sides each name one series provider, the same one (the comparison is of one query's
 * answers), and each side passes that provider's own checks; its numbers read; it has no conditions,
 * which it would ignore (the judge decides).
 */
function judgeIssues(metric: Metric): MetricProviderIssue[] {
  const judge = metric.provider.judge;
  if (judge === undefined) return [];
  const at = ['provider', 'judge'];
  const issues: MetricProviderIssue[] = [];
  const keys: Record<string, string | undefined> = {};
  for (const side of ['canary', 'stable'] as const) {
    const found = seriesProviderKeys(judge[side]);
    if (found.length !== 1) {
      issues.push({
        path: [...at, side],
        message: `must set one provider (prometheus, web, datadog, newRelic, graphite), found ${found.length === 0 ? 'none' : found.join(', ')}`,
      });
      continue;
    }
    keys[side] = found[0];
    for (const issue of metricProviderIssues({ ...metric, provider: judge[side] }))
      issues.push({ path: [...at, side, ...issue.path.slice(1)], message: issue.message });
  }
  if (keys['canary'] !== undefined && keys['stable'] !== undefined && keys['canary'] !== keys['stable'])
    issues.push({
      path: [...at, 'stable'],
      message: `must use the canary's provider (${keys['canary']}), got ${keys['stable']}: both sides are one query's answers`,
    });
  const numbers = [judge.tolerance, judge.confidence, judge.minSamples];
  if (!numbers.some((n) => typeof n === 'string' && PLACEHOLDER.test(n))) {
    try {
      readJudgeFields(judge);
    } catch (error) {
      if (!(error instanceof JudgeFieldError)) throw error;
      issues.push({ path: [...at, error.field], message: error.reason });
    }
  }
  for (const field of ['successCondition', 'failureCondition'] as const)
    if (metric[field] !== undefined)
      issues.push({ path: [field], message: 'is not used by a judge metric (the judge decides): remove it' });
  return issues;
}

/**
 * What a run of `metric` would trip over in its provider block: a rangeQuery whose start/end are not
 * time expressions or whose step is no positive duration (unless an `{{args.x}}` is still in it),
 * an `authentication` with more than one method or without a method's required fields, a Datadog
 * block whose query fields do not combine, an empty New Relic query, a Graphite block without address or query,
 * a judge whose sides or numbers do not read.
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
    ...datadogIssues(metric),
    ...(metric.provider.newRelic !== undefined && metric.provider.newRelic.query.trim() === ''
      ? [{ path: ['provider', 'newRelic', 'query'], message: 'must not be empty' }]
      : []),
    ...(['address', 'query'] as const)
      .filter((field) => metric.provider.graphite !== undefined && !metric.provider.graphite[field]?.trim())
      .map((field) => ({ path: ['provider', 'graphite', field], message: 'is required' })),
    ...judgeIssues(metric),
  ];
}
