// Checks of a metric's provider block that need more than its shape: rangeQuery bounds and step, one authentication method with its fields, Datadog's query combinations, CloudWatch's queries, Wavefront's address, SkyWalking's interval, Kayenta's thresholds and scopes, a judge's sides and numbers.
import type { KayentaMetric, Metric, MetricAuthentication, SeriesProvider } from './analysis.ts';
import { parseDuration } from './duration.ts';
import { JudgeFieldError } from './judge-field-error.ts';
import { readJudgeFields } from './judge-fields.ts';
import { authenticationMethods } from './metric-authentication.ts';
import { cloudWatchIssues } from './cloudwatch-metric-checks.ts';
import { checkTimeExpression } from './time-expression.ts';
import { readWavefrontAddress } from './wavefront-address.ts';

/** One problem, at a path relative to the metric (`['provider', 'prometheus', 'rangeQuery', 'step']`). */
export interface MetricProviderIssue {
  path: Array<string | number>;
  message: string;
  /** A warning: the template runs in Rollgate, but something about it deserves a look. Default: error. */
  severity?: 'warning';
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
        message: `must set one provider (prometheus, web, datadog, newRelic, graphite, cloudWatch, influxdb, wavefront, skywalking), found ${found.length === 0 ? 'none' : found.join(', ')}`,
      });
      continue;
    }
    keys[side] = found[0];
    for (const issue of metricProviderIssues({ ...metric, provider: judge[side] }))
      issues.push({ ...issue, path: [...at, side, ...issue.path.slice(1)] });
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

// Fields that must hold more than blanks.
function requiredIssues<T extends object>(
  block: T | undefined,
  fields: ReadonlyArray<keyof T & string>,
  at: Array<string | number>,
): MetricProviderIssue[] {
  if (block === undefined) return [];
  return fields
    .filter((field) => {
      const value = block[field];
      return typeof value !== 'string' || value.trim() === '';
    })
    .map((field) => ({ path: [...at, field], message: 'is required' }));
}

// An http(s) URL (unless a placeholder is still in it).
function urlIssue(value: string | undefined, path: Array<string | number>): MetricProviderIssue[] {
  if (value === undefined || value.trim() === '' || PLACEHOLDER.test(value)) return [];
  try {
    const url = new URL(value.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return [];
  } catch {
    // Reported below.
  }
  return [{ path, message: `must be an http or https URL, got ${JSON.stringify(value)}` }];
}

function wavefrontIssues(metric: Metric): MetricProviderIssue[] {
  const wf = metric.provider.wavefront;
  if (wf === undefined) return [];
  const at = ['provider', 'wavefront'];
  const issues = requiredIssues(wf, ['query'], at);
  const address = wf.address ?? '';
  if (!PLACEHOLDER.test(address)) {
    const read = readWavefrontAddress(address);
    if ('problem' in read) issues.unshift({ path: [...at, 'address'], message: read.problem });
  }
  return issues;
}

function skyWalkingIssues(metric: Metric): MetricProviderIssue[] {
  const sw = metric.provider.skywalking;
  if (sw === undefined) return [];
  const at = ['provider', 'skywalking'];
  return [
    ...requiredIssues(sw, ['address', 'query', 'interval'], at),
    ...urlIssue(sw.address, [...at, 'address']),
    ...(sw.interval?.trim() ? positiveDurationIssue(sw.interval, [...at, 'interval']) : []),
  ];
}

/** A start or an end set on one side of a scope and not on the other (Argo refuses that when it measures). */
function scopeWindowIssues(
  scope: NonNullable<KayentaMetric['scopes']>[number],
  at: Array<string | number>,
): MetricProviderIssue[] {
  return (['start', 'end'] as const)
    .filter((field) => !scope.controlScope[field] !== !scope.experimentScope[field])
    .map((field) => ({
      path: [...at, scope.controlScope[field] ? 'experimentScope' : 'controlScope', field],
      message: `must be set when ${scope.controlScope[field] ? 'controlScope' : 'experimentScope'}.${field} is (both or neither)`,
    }));
}

/**
 * Kayenta's block: its service, application and config named; one threshold (`threshold`, Argo's field,
 * or `thresholds`, as Argo's docs write it) with 0 <= marginal <= pass <= 100; at least one scope, names
 * unique, each side with a positive step, windows set on both sides or neither; a scope without a start
 * needs the metric's `interval` (or `lookback`), from which its window is counted.
 */
function kayentaIssues(metric: Metric): MetricProviderIssue[] {
  const k = metric.provider.kayenta;
  if (k === undefined) return [];
  const at = ['provider', 'kayenta'];
  const issues = [
    ...requiredIssues(k, ['address', 'application', 'canaryConfigName'], at),
    ...urlIssue(k.address, [...at, 'address']),
  ];
  if (k.threshold !== undefined && k.thresholds !== undefined)
    issues.push({
      path: [...at, 'thresholds'],
      message: 'cannot be set with threshold (they are the same field)',
    });
  const threshold = k.threshold ?? k.thresholds;
  const thresholdAt = [...at, k.threshold !== undefined ? 'threshold' : 'thresholds'];
  if (threshold === undefined)
    issues.push({
      path: [...at, 'threshold'],
      message: 'is required: {pass, marginal}, the scores that pass and that are inconclusive',
    });
  else {
    for (const field of ['pass', 'marginal'] as const)
      if (threshold[field] < 0 || threshold[field] > 100)
        issues.push({ path: [...thresholdAt, field], message: 'must be a score from 0 to 100' });
    if (threshold.marginal > threshold.pass)
      issues.push({
        path: [...thresholdAt, 'marginal'],
        message: `must not be more than pass (${threshold.pass})`,
      });
    if (k.thresholds !== undefined && k.threshold === undefined)
      issues.push({
        path: thresholdAt,
        severity: 'warning',
        message:
          "read as threshold: Argo's CRD spells this field threshold (its docs write thresholds), and Argo's API server refuses a kayenta metric without threshold",
      });
  }
  const scopes = k.scopes ?? [];
  if (scopes.length === 0)
    issues.push({ path: [...at, 'scopes'], message: 'at least one scope is required' });
  const names = new Map<string, number>();
  scopes.forEach((scope, index) => {
    const scopeAt = [...at, 'scopes', index];
    if (scope.name.trim() === '') issues.push({ path: [...scopeAt, 'name'], message: 'must not be empty' });
    const first = names.get(scope.name);
    if (first !== undefined)
      issues.push({ path: [...scopeAt, 'name'], message: `duplicate scope name (also scopes[${first}])` });
    else names.set(scope.name, index);
    for (const side of ['controlScope', 'experimentScope'] as const)
      if (scope[side].step <= 0)
        issues.push({ path: [...scopeAt, side, 'step'], message: 'must be more than 0 (seconds)' });
    issues.push(...scopeWindowIssues(scope, scopeAt));
    if (
      !scope.controlScope.start &&
      !scope.experimentScope.start &&
      k.lookback !== true &&
      metric.interval === undefined
    )
      issues.push({
        path: [...scopeAt, 'controlScope'],
        message:
          "has no start: set start and end, the metric's interval (the window is the last interval) or lookback: true",
      });
  });
  return issues;
}

/**
 * What a run of `metric` would trip over in its provider block: a rangeQuery whose start/end are not
 * time expressions or whose step is no positive duration (unless an `{{args.x}}` is still in it),
 * an `authentication` with more than one method or without a method's required fields, a Datadog
 * block whose query fields do not combine, an empty New Relic query, a Graphite block without address or query,
 * CloudWatch queries GetMetricData would refuse, an InfluxDB block without a query, a Wavefront address
 * that is no host (or https URL), a SkyWalking block without address, query or interval, a Kayenta block
 * whose threshold or scopes cannot be judged, a judge whose sides or numbers do not read.
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
    ...cloudWatchIssues(metric.provider.cloudWatch),
    ...(metric.provider.influxdb !== undefined && !metric.provider.influxdb.query?.trim()
      ? [{ path: ['provider', 'influxdb', 'query'], message: 'is required' }]
      : []),
    ...wavefrontIssues(metric),
    ...skyWalkingIssues(metric),
    ...kayentaIssues(metric),
    ...judgeIssues(metric),
  ];
}
