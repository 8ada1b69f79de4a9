// What a CloudWatch metric's queries must hold before GetMetricData would take them, checked at validate time.
import type { CloudWatchMetric } from './analysis.ts';
import { parseDuration } from './duration.ts';

/** CloudWatch's StandardUnit values (the GetMetricData model's enum). */
export const CLOUDWATCH_UNITS = [
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
] as const;
/** The most queries one GetMetricData call takes. */
export const CLOUDWATCH_MAX_QUERIES = 500;
/** A query id: letters, digits and underscores, a lowercase letter first (CloudWatch refuses others). */
const QUERY_ID = /^[a-z][A-Za-z0-9_]*$/;
// Checked again once the run is built, when the placeholder has its value.
const PLACEHOLDER = /\{\{.+\}\}/;

/** One problem, at a path relative to the metric. */
export interface CloudWatchIssue {
  path: Array<string | number>;
  message: string;
}

function periodIssue(value: string | number | undefined, path: Array<string | number>): CloudWatchIssue[] {
  if (value === undefined || (typeof value === 'string' && PLACEHOLDER.test(value))) return [];
  const number = typeof value === 'number' ? value : Number(value.trim());
  return Number.isInteger(number) && number >= 1
    ? []
    : [{ path, message: 'must be a whole number of seconds, at least 1' }];
}

/**
 * GetMetricData's rules for `metricDataQueries`, as CloudWatch would refuse them at the first
 * measurement (here before any run): 1 to 500 queries, each with a unique `id` (a lowercase letter
 * first), exactly one of `expression` and `metricStat`; a metricStat names its metric (namespace,
 * metricName), `period` (whole seconds) and `stat`, and a `unit` CloudWatch knows; `interval` is a
 * positive duration.
 */
export function cloudWatchIssues(spec: CloudWatchMetric | undefined): CloudWatchIssue[] {
  if (spec === undefined) return [];
  const at = ['provider', 'cloudWatch'];
  const issues: CloudWatchIssue[] = [];
  const queries = spec.metricDataQueries;
  if (queries.length === 0)
    issues.push({ path: [...at, 'metricDataQueries'], message: 'must hold at least one query' });
  if (queries.length > CLOUDWATCH_MAX_QUERIES)
    issues.push({
      path: [...at, 'metricDataQueries'],
      message: `holds more than ${CLOUDWATCH_MAX_QUERIES} queries`,
    });
  const seen = new Set<string>();
  queries.forEach((query, index) => {
    const q = [...at, 'metricDataQueries', index];
    if (!query.id) issues.push({ path: [...q, 'id'], message: 'is required' });
    else if (!PLACEHOLDER.test(query.id) && !QUERY_ID.test(query.id))
      issues.push({
        path: [...q, 'id'],
        message: 'must start with a lowercase letter and hold only letters, digits and underscores',
      });
    else if (seen.has(query.id)) issues.push({ path: [...q, 'id'], message: `"${query.id}" is used twice` });
    if (query.id) seen.add(query.id);
    const hasExpression = query.expression !== undefined && query.expression.trim() !== '';
    if (hasExpression === (query.metricStat !== undefined))
      issues.push({ path: q, message: 'must set exactly one of expression and metricStat' });
    issues.push(...periodIssue(query.period, [...q, 'period']));
    const stat = query.metricStat;
    if (stat === undefined) return;
    for (const field of ['namespace', 'metricName'] as const)
      if (!stat.metric?.[field])
        issues.push({ path: [...q, 'metricStat', 'metric', field], message: 'is required' });
    (stat.metric?.dimensions ?? []).forEach((dimension, d) => {
      for (const field of ['name', 'value'] as const)
        if (dimension[field] === '')
          issues.push({
            path: [...q, 'metricStat', 'metric', 'dimensions', d, field],
            message: 'must not be empty',
          });
    });
    if ((stat.metric?.dimensions?.length ?? 0) > 30)
      issues.push({
        path: [...q, 'metricStat', 'metric', 'dimensions'],
        message: 'holds more than 30 dimensions',
      });
    if (stat.period === undefined)
      issues.push({ path: [...q, 'metricStat', 'period'], message: 'is required' });
    issues.push(...periodIssue(stat.period, [...q, 'metricStat', 'period']));
    if (!stat.stat) issues.push({ path: [...q, 'metricStat', 'stat'], message: 'is required' });
    if (
      stat.unit &&
      !PLACEHOLDER.test(stat.unit) &&
      !(CLOUDWATCH_UNITS as readonly string[]).includes(stat.unit)
    )
      issues.push({
        path: [...q, 'metricStat', 'unit'],
        message: `must be one of ${CLOUDWATCH_UNITS.join(', ')}`,
      });
  });
  if (spec.interval !== undefined && !PLACEHOLDER.test(spec.interval)) {
    try {
      if (parseDuration(spec.interval) <= 0)
        issues.push({ path: [...at, 'interval'], message: 'must be more than 0' });
    } catch (error) {
      issues.push({ path: [...at, 'interval'], message: (error as Error).message });
    }
  }
  return issues;
}
