// The CloudWatch metric provider: one GetMetricData call (AWS Query protocol, SigV4-signed) per measurement over the last `interval`.
import { XMLParser } from 'fast-xml-parser';
import type { CloudWatchMetric, CloudWatchMetricDataQuery, Metric } from '../../manifest/analysis.ts';
import { DurationError, parseDuration } from '../../manifest/duration.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest, type HttpResponse } from './http-request.ts';
import type { MeasureContext, MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { goFloat } from './go-float-format.ts';
import { rateLimitDelayMs } from './rate-limit.ts';
import {
  awsCredentialsFromEnvironment,
  CLOUDWATCH_SERVICE,
  signSigv4,
  type AwsCredentials,
} from './sigv4-signer.ts';

const TYPE = 'cloudWatch';

/** Argo's window when `interval` is not set. */
export const CLOUDWATCH_DEFAULT_INTERVAL = '5m';
/** How long one GetMetricData call may take (Argo sets none; a hung call must still end as an Error). */
export const CLOUDWATCH_TIMEOUT_MS = 30_000;
/** The API version every Query-protocol request names (the model's service version). */
export const CLOUDWATCH_API_VERSION = '2010-08-01';
/**
 * The AWS SDKs' endpoint overrides, service-specific first (`AWS_ENDPOINT_URL_<sdkId>`, sdkId
 * "CloudWatch"): a VPC endpoint, a FIPS endpoint, or a test double.
 */
export const CLOUDWATCH_ENDPOINT_VARIABLES = ['AWS_ENDPOINT_URL_CLOUDWATCH', 'AWS_ENDPOINT_URL'] as const;
/** The Query-protocol error codes that mean "slow down" (answered 400, not 429). */
const THROTTLING_CODES = new Set([
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
]);

/** Options for {@link createCloudWatchProvider}. */
export interface CloudWatchProviderOptions {
  /** AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_ENDPOINT_URL_CLOUDWATCH (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Which hosts the endpoint may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** Overrides {@link CLOUDWATCH_TIMEOUT_MS} (tests). */
  timeoutMs?: number;
}

/** One of GetMetricData's MetricDataResults, with the SDK's field names Argo's conditions read (`result[0].Values`). */
export interface CloudWatchResult {
  Id: string;
  Label: string;
  StatusCode: string;
  /** RFC 3339 times, one per value. */
  Timestamps: string[];
  Values: number[];
  Messages: Array<{ Code: string; Value: string }>;
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

/** `monitoring.<region>.amazonaws.com` (`.com.cn` in China), unless an endpoint variable names another. */
export function cloudWatchEndpoint(
  region: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  for (const name of CLOUDWATCH_ENDPOINT_VARIABLES) {
    const value = env[name]?.trim();
    if (value) return value.replace(/\/+$/, '');
  }
  return `https://monitoring.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

function seconds(value: string | number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const number = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isInteger(number) || number < 1)
    throw fail(`${field}: must be a whole number of seconds, at least 1`);
  return number;
}

/**
 * GetMetricData's input in the AWS Query protocol's form encoding: Action and Version, StartTime and
 * EndTime as date-times, and each query's members as `MetricDataQueries.member.N.<Member>` (lists as
 * `.member.N`), names as the model spells them.
 */
export function getMetricDataForm(
  queries: readonly CloudWatchMetricDataQuery[],
  start: Date,
  end: Date,
): URLSearchParams {
  const form = new URLSearchParams({ Action: 'GetMetricData', Version: CLOUDWATCH_API_VERSION });
  form.set('StartTime', start.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  form.set('EndTime', end.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  queries.forEach((query, index) => {
    const at = `MetricDataQueries.member.${index + 1}`;
    const field = `metricDataQueries[${index}]`;
    form.set(`${at}.Id`, query.id ?? '');
    if (query.expression !== undefined) form.set(`${at}.Expression`, query.expression);
    if (query.label !== undefined) form.set(`${at}.Label`, query.label);
    const stat = query.metricStat;
    if (stat !== undefined) {
      const metric = stat.metric ?? {};
      if (metric.namespace !== undefined) form.set(`${at}.MetricStat.Metric.Namespace`, metric.namespace);
      if (metric.metricName !== undefined) form.set(`${at}.MetricStat.Metric.MetricName`, metric.metricName);
      (metric.dimensions ?? []).forEach((dimension, d) => {
        form.set(`${at}.MetricStat.Metric.Dimensions.member.${d + 1}.Name`, dimension.name);
        form.set(`${at}.MetricStat.Metric.Dimensions.member.${d + 1}.Value`, dimension.value);
      });
      const period = seconds(stat.period, `${field}.metricStat.period`);
      if (period !== undefined) form.set(`${at}.MetricStat.Period`, String(period));
      if (stat.stat !== undefined) form.set(`${at}.MetricStat.Stat`, stat.stat);
      if (stat.unit !== undefined && stat.unit !== '') form.set(`${at}.MetricStat.Unit`, stat.unit);
    }
    const period = seconds(query.period, `${field}.period`);
    if (period !== undefined) form.set(`${at}.Period`, String(period));
    if (query.returnData !== undefined) form.set(`${at}.ReturnData`, String(query.returnData));
  });
  return form;
}

// Every list in a Query-protocol answer is a run of <member> elements: always read them as arrays.
const xml = new XMLParser({
  parseTagValue: false,
  ignoreAttributes: true,
  processEntities: true,
  isArray: (name) => name === 'member',
});

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
function members(value: unknown): unknown[] {
  return isNode(value) && Array.isArray(value['member']) ? value['member'] : [];
}

function parseXml(body: string): Node | undefined {
  // AWS never sends a DOCTYPE; refusing one leaves no room for entity expansion (billion laughs).
  if (/<!DOCTYPE/i.test(body)) return undefined;
  try {
    const parsed = xml.parse(body) as unknown;
    return isNode(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The Query protocol's error (`<ErrorResponse><Error><Code/><Message/>`), when the body is one. */
function queryError(body: string): { code: string; message: string } | undefined {
  const root = parseXml(body);
  const error = isNode(root?.['ErrorResponse']) ? root['ErrorResponse']['Error'] : undefined;
  if (!isNode(error)) return undefined;
  return { code: text(error['Code']), message: text(error['Message']) };
}

/** The measurement as Argo stores it: each result's values, `[[v1 v2] [v3]]`. */
export function formatCloudWatchValues(results: readonly CloudWatchResult[]): string {
  return `[${results.map((r) => `[${r.Values.map(goFloat).join(' ')}]`).join(' ')}]`;
}

/**
 * GetMetricData's answer (GetMetricDataResponse/GetMetricDataResult) as the list of MetricDataResults,
 * and the operation's own Messages. A value that is not a number is an error.
 */
export function mapGetMetricData(body: string): {
  results: CloudWatchResult[];
  messages: Array<{ Code: string; Value: string }>;
} {
  const root = parseXml(body);
  const response = root?.['GetMetricDataResponse'];
  const result = isNode(response) ? response['GetMetricDataResult'] : undefined;
  if (!isNode(result)) throw fail('the answer is not a GetMetricDataResponse');
  const messagesOf = (value: unknown) =>
    members(value).map((m) => ({
      Code: text(isNode(m) ? m['Code'] : ''),
      Value: text(isNode(m) ? m['Value'] : ''),
    }));
  const results = members(result['MetricDataResults']).map((entry, index): CloudWatchResult => {
    const node = isNode(entry) ? entry : {};
    const values = members(node['Values']).map((raw) => {
      const value = Number(text(raw));
      if (text(raw).trim() === '' || Number.isNaN(value))
        throw fail(`MetricDataResults[${index}]: value ${JSON.stringify(raw)} is not a number`);
      return value;
    });
    return {
      Id: text(node['Id']),
      Label: text(node['Label']),
      StatusCode: text(node['StatusCode']),
      Timestamps: members(node['Timestamps']).map(text),
      Values: values,
      Messages: messagesOf(node['Messages']),
    };
  });
  return { results, messages: messagesOf(result['Messages']) };
}

function intervalMs(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    if (error instanceof DurationError) throw fail(`interval: ${error.message}`);
    throw error;
  }
  if (ms <= 0) throw fail('interval must be more than 0');
  return ms;
}

function region(env: Readonly<Record<string, string | undefined>>): string {
  const value = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'];
  if (!value)
    throw fail('no AWS region (set AWS_REGION in the reconciler’s environment, as Argo Rollouts asks)');
  return value;
}

function credentials(env: Readonly<Record<string, string | undefined>>): AwsCredentials {
  if (!env['AWS_ACCESS_KEY_ID'] && env['AWS_WEB_IDENTITY_TOKEN_FILE'])
    throw fail(
      'web identity credentials (IRSA: AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN) are not supported yet; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    );
  return awsCredentialsFromEnvironment(TYPE, env, 'cloudWatch');
}

function answerError(response: HttpResponse, now: Date): MetricProviderError {
  const error = queryError(response.body);
  const said = error
    ? `${error.code}: ${error.message}`
    : response.body.trim().slice(0, 200) || '(empty body)';
  if (response.status === 429 || (error !== undefined && THROTTLING_CODES.has(error.code)))
    return fail(
      `HTTP ${response.status} (rate limited): ${said}`,
      undefined,
      rateLimitDelayMs(response.headers, now),
    );
  return fail(`HTTP ${response.status}: ${said}`);
}

/**
 * The CloudWatch provider, with Argo's fields and semantics: one GetMetricData call for
 * `metricDataQueries` over [now − `interval` (default 5m), now], sent as the model's protocol says
 * (AWS Query: a form POST, the answer XML) to the region's endpoint, signed with SigV4 for `monitoring`
 * with the credentials and region in the reconciler's environment (as the AWS SDK Argo uses reads them
 * first). The result is the list of MetricDataResults with the SDK's field names
 * (`result[0].Values`, `result[0].Label`, …); the stored value is each result's values (`[[0.01 0.02]]`)
 * and the operation's Messages go to `metadata.messages`. An AWS error is an Error with AWS's code and
 * message; throttling (429, or 400 Throttling) also tells the run when to ask again.
 */
export function createCloudWatchProvider(options: CloudWatchProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx: MeasureContext): Promise<ProviderMeasurement> {
      const spec: CloudWatchMetric | undefined = metric.provider.cloudWatch;
      if (spec === undefined) throw fail('no cloudWatch provider on this metric', metric.name);
      const env = options.env ?? process.env;
      let keys: AwsCredentials | undefined;
      try {
        if (spec.metricDataQueries.length === 0) throw fail('metricDataQueries must hold at least one query');
        const window = intervalMs(spec.interval || CLOUDWATCH_DEFAULT_INTERVAL);
        const where = region(env);
        keys = credentials(env);
        const end = new Date(Math.floor(ctx.now.getTime() / 1000) * 1000);
        const body = getMetricDataForm(
          spec.metricDataQueries,
          new Date(end.getTime() - window),
          end,
        ).toString();
        const endpoint = cloudWatchEndpoint(where, env);
        let url: URL;
        try {
          url = new URL(`${endpoint}/`);
        } catch {
          throw fail(`the endpoint ${JSON.stringify(endpoint)} is not a URL`);
        }
        const headers = signSigv4(
          {
            url,
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
              accept: 'text/xml',
            },
            body,
          },
          where,
          keys,
          ctx.now,
          CLOUDWATCH_SERVICE,
        );
        const response = await sendHttpRequest({
          provider: TYPE,
          url: url.toString(),
          method: 'POST',
          headers,
          body,
          timeoutMs: options.timeoutMs ?? CLOUDWATCH_TIMEOUT_MS,
          ...(options.policy && { policy: options.policy }),
        });
        if (response.status < 200 || response.status >= 300) throw answerError(response, ctx.now);
        const { results, messages } = mapGetMetricData(response.body);
        return {
          value: results,
          raw: formatCloudWatchValues(results),
          ...(messages.length > 0 && { metadata: { messages: JSON.stringify(messages) } }),
        };
      } catch (error) {
        if (!(error instanceof MetricProviderError)) throw error;
        const scrub = secretScrubber(
          keys === undefined ? [] : [keys.secretAccessKey, keys.sessionToken ?? ''],
        );
        throw fail(scrub(error.reason), metric.name, error.retryAfterMs);
      }
    },
  };
}
