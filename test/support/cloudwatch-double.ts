// A CloudWatch double: recomputes each request's SigV4 signature, decodes it by AWS's published model of GetMetricData, answers from points the test wrote.
//
// The model is AWS's Smithy JSON for CloudWatch (aws/api-models-aws, commit 56c8953,
// cloudwatch/service/2010-08-01/cloudwatch-2010-08-01.json); the part GetMetricData reaches is kept in
// ./api-models/cloudwatch-get-metric-data.json (documentation left out), and
// test/unit/analysis/published-api-excerpts.test.ts compares it with the mirror when one is fetched.
// The service's protocol trait is awsQuery: a form POST to `/` with Action and Version, members as
// `Name.member.N.Member`, timestamps as date-times, the answer XML. Every key of a request is decoded
// against the input shape (types, enums, lengths, ranges, required members); a key the shape has no
// place for, or a broken rule, is a violation answered 400 as CloudWatch would.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { sigv4Refusal } from './sigv4-verifier.ts';
import type { SmithyShape } from './api-models/api-model-excerpt.ts';

interface Excerpt {
  serviceVersion: string;
  serviceTraits: Record<string, unknown>;
  shapes: Record<string, SmithyShape>;
}

export const CLOUDWATCH_MODEL = JSON.parse(
  readFileSync(new URL('./api-models/cloudwatch-get-metric-data.json', import.meta.url), 'utf8'),
) as Excerpt;
const NS = 'com.amazonaws.cloudwatch#';
const GET_METRIC_DATA = CLOUDWATCH_MODEL.shapes[`${NS}GetMetricData`] as SmithyShape;

/** A point: epoch milliseconds and a value. */
export type Point = [number, number];
/** What the double does instead of answering (an outage). */
export type CloudWatchFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A metric as the test names it: namespace, name, and dimensions in any order. */
export interface MetricKey {
  namespace: string;
  metricName: string;
  dimensions?: Record<string, string>;
}

export interface CloudWatchDouble {
  /** Put in AWS_ENDPOINT_URL_CLOUDWATCH. */
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Set to expect temporary credentials: requests must carry and sign this X-Amz-Security-Token. */
  sessionToken: string | undefined;
  /** The environment the provider needs to reach the double with the known key. */
  env(): Record<string, string>;
  /** Every GetMetricData input received (decoded by the model), in order. */
  readonly requests: Array<Record<string, unknown>>;
  /** Requests refused for their signature, with the reason. */
  readonly refusedSignatures: string[];
  /** Requests that broke the model (each was answered 400): tests expect none. */
  readonly violations: string[];
  /** The points a metric has (replacing earlier ones). */
  write(metric: MetricKey, points: Point[]): void;
  /** A metric that holds `value` at every minute. */
  set(metric: MetricKey, value: number): void;
  /** Set to make every request fail this way until cleared. */
  fault: CloudWatchFault | undefined;
  stop(): Promise<void>;
}

// ---- awsQuery decoding by the model -------------------------------------------------------------

type Form = Map<string, string>;

function traitsOf(
  member: { traits?: Record<string, unknown> } | undefined,
  shape: SmithyShape,
): Record<string, unknown> {
  return { ...shape.traits, ...member?.traits };
}

/**
 * Decodes the form keys under `prefix` as `target`, consuming them from `form`; `problems` gets each
 * broken rule. Returns undefined when nothing of it was sent.
 */
function decode(
  form: Form,
  prefix: string,
  target: string,
  problems: string[],
  traits: Record<string, unknown> = {},
): unknown {
  const shape = CLOUDWATCH_MODEL.shapes[target];
  if (shape === undefined) {
    problems.push(`${prefix}: shape ${target} is not in the model`);
    return undefined;
  }
  const all = { ...shape.traits, ...traits };
  if (shape.type === 'structure') {
    const out: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const [name, member] of Object.entries(shape.members ?? {})) {
      const key = prefix === '' ? name : `${prefix}.${name}`;
      const memberShape = CLOUDWATCH_MODEL.shapes[member.target] ?? { type: '' };
      const value = decode(form, key, member.target, problems, traitsOf(member, memberShape));
      if (value !== undefined) out[name] = value;
      else if (member.traits?.['smithy.api#required'] !== undefined) missing.push(`${key}: required`);
    }
    // A structure not sent at all is absent, not missing its members.
    if (Object.keys(out).length === 0 && prefix !== '') return undefined;
    problems.push(...missing);
    return out;
  }
  if (shape.type === 'list') {
    const items: unknown[] = [];
    for (let i = 1; ; i++) {
      const itemPrefix = `${prefix}.member.${i}`;
      const present = [...form.keys()].some((k) => k === itemPrefix || k.startsWith(`${itemPrefix}.`));
      if (!present) break;
      items.push(decode(form, itemPrefix, shape.member?.target ?? '', problems));
    }
    // Keys past a gap (member.1, member.3) stay unconsumed and are reported as unknown members.
    if (items.length === 0 && !form.has(prefix)) return undefined;
    if (form.has(prefix)) {
      if (form.get(prefix) !== '') problems.push(`${prefix}: a list is sent as ${prefix}.member.N`);
      form.delete(prefix);
    }
    const length = all['smithy.api#length'] as { min?: number; max?: number } | undefined;
    if (length?.min !== undefined && items.length < length.min)
      problems.push(`${prefix}: fewer than ${length.min} items`);
    if (length?.max !== undefined && items.length > length.max)
      problems.push(`${prefix}: more than ${length.max} items`);
    return items;
  }
  if (!form.has(prefix)) return undefined;
  const raw = form.get(prefix) ?? '';
  form.delete(prefix);
  switch (shape.type) {
    case 'string': {
      const length = all['smithy.api#length'] as { min?: number; max?: number } | undefined;
      if (length?.min !== undefined && raw.length < length.min)
        problems.push(`${prefix}: shorter than ${length.min}`);
      if (length?.max !== undefined && raw.length > length.max)
        problems.push(`${prefix}: longer than ${length.max}`);
      const pattern = all['smithy.api#pattern'];
      if (typeof pattern === 'string' && !new RegExp(pattern, 'u').test(raw))
        problems.push(`${prefix}: does not match ${pattern}`);
      return raw;
    }
    case 'enum': {
      const values = Object.values(shape.members ?? {}).map((m) => m.traits?.['smithy.api#enumValue']);
      if (!values.includes(raw))
        problems.push(`${prefix}: ${JSON.stringify(raw)} is not one of the enum's values`);
      return raw;
    }
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) {
        problems.push(`${prefix}: ${JSON.stringify(raw)} is not an integer`);
        return raw;
      }
      const value = Number(raw);
      const range = all['smithy.api#range'] as { min?: number; max?: number } | undefined;
      if (range?.min !== undefined && value < range.min) problems.push(`${prefix}: less than ${range.min}`);
      if (range?.max !== undefined && value > range.max) problems.push(`${prefix}: more than ${range.max}`);
      return value;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        problems.push(`${prefix}: ${JSON.stringify(raw)} is not a boolean`);
      return raw === 'true';
    case 'timestamp': {
      // awsQuery sends timestamps as RFC 3339 date-times.
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(raw))
        problems.push(`${prefix}: ${JSON.stringify(raw)} is not a date-time`);
      return new Date(raw);
    }
    default:
      problems.push(`${prefix}: the double cannot read a ${shape.type}`);
      return raw;
  }
}

/** The GetMetricData input decoded from an awsQuery form, and what broke the model. */
export function decodeGetMetricData(body: string): { input: Record<string, unknown>; problems: string[] } {
  const form: Form = new Map(new URLSearchParams(body));
  const problems: string[] = [];
  if (form.get('Action') !== 'GetMetricData')
    problems.push(`Action: ${String(form.get('Action'))} is not GetMetricData`);
  if (form.get('Version') !== CLOUDWATCH_MODEL.serviceVersion)
    problems.push(`Version: must be ${CLOUDWATCH_MODEL.serviceVersion}`);
  form.delete('Action');
  form.delete('Version');
  const input = decode(form, '', GET_METRIC_DATA.input?.target ?? '', problems) as Record<string, unknown>;
  for (const key of form.keys()) problems.push(`${key}: GetMetricDataInput has no such member`);
  return { input, problems };
}

// ---- answering from points ------------------------------------------------------------------------

interface Stat {
  Metric: { Namespace?: string; MetricName?: string; Dimensions?: Array<{ Name: string; Value: string }> };
  Period: number;
  Stat: string;
}
interface Query {
  Id: string;
  MetricStat?: Stat;
  Expression?: string;
  Label?: string;
  ReturnData?: boolean;
}

const keyOf = (namespace: string, name: string, dimensions: Record<string, string>): string =>
  JSON.stringify([namespace, name, Object.entries(dimensions).sort(([a], [b]) => (a < b ? -1 : 1))]);

function statOf(values: number[], stat: string): number {
  const sum = values.reduce((a, b) => a + b, 0);
  switch (stat) {
    case 'Sum':
      return sum;
    case 'Average':
      return sum / values.length;
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
    case 'SampleCount':
      return values.length;
    default:
      throw new Error(`the double knows no statistic ${stat}`);
  }
}

/** Metric math the tests write: query ids, numbers, + - * / and parentheses, point by point. */
function evaluate(expression: string, series: Map<string, Map<number, number>>): Map<number, number> {
  const tokens = expression.match(/[a-z]\w*|\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let i = 0;
  type S = Map<number, number> | number;
  const combine = (a: S, b: S, op: string): S => {
    const f = (x: number, y: number) =>
      op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : x / y;
    if (typeof a === 'number' && typeof b === 'number') return f(a, b);
    const times = typeof a === 'number' ? [...(b as Map<number, number>).keys()] : [...a.keys()];
    const out = new Map<number, number>();
    for (const t of times) {
      const x = typeof a === 'number' ? a : a.get(t);
      const y = typeof b === 'number' ? b : b.get(t);
      if (x !== undefined && y !== undefined) out.set(t, f(x, y));
    }
    return out;
  };
  const primary = (): S => {
    const token = tokens[i++];
    if (token === '(') {
      const inner = sum();
      i++;
      return inner;
    }
    if (token !== undefined && /^\d/.test(token)) return Number(token);
    const named = token === undefined ? undefined : series.get(token);
    if (named === undefined) throw new Error(`Unknown id ${String(token)} in expression`);
    return named;
  };
  const product = (): S => {
    let left = primary();
    while (tokens[i] === '*' || tokens[i] === '/') {
      const op = tokens[i++] ?? '*';
      left = combine(left, primary(), op);
    }
    return left;
  };
  const sum = (): S => {
    let left = product();
    while (tokens[i] === '+' || tokens[i] === '-') {
      const op = tokens[i++] ?? '+';
      left = combine(left, product(), op);
    }
    return left;
  };
  const result = sum();
  return typeof result === 'number' ? new Map() : result;
}

const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function errorXml(code: string, message: string, type = 'Sender'): string {
  return `<ErrorResponse xmlns="${String((CLOUDWATCH_MODEL.serviceTraits['smithy.api#xmlNamespace'] as { uri: string }).uri)}"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlText(message)}</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>`;
}

/** Starts the double on a free loopback port. */
export async function startCloudWatchDouble(): Promise<CloudWatchDouble> {
  const points = new Map<string, Point[] | number>();
  const requests: Array<Record<string, unknown>> = [];
  const violations: string[] = [];
  const refusedSignatures: string[] = [];
  const hanging = new Set<ServerResponse>();
  const sigv4 = CLOUDWATCH_MODEL.serviceTraits['aws.auth#sigv4'] as { name: string };
  const double = {
    endpoint: '',
    region: 'eu-west-1',
    accessKeyId: 'AKIAROLLGATEDOUBLE01',
    secretAccessKey: 'cw-double-secret/5b1e0c7d9a2f8c4e6a1b',
    sessionToken: undefined as string | undefined,
    env(): Record<string, string> {
      return {
        AWS_REGION: double.region,
        AWS_ACCESS_KEY_ID: double.accessKeyId,
        AWS_SECRET_ACCESS_KEY: double.secretAccessKey,
        AWS_ENDPOINT_URL_CLOUDWATCH: double.endpoint,
        ...(double.sessionToken !== undefined && { AWS_SESSION_TOKEN: double.sessionToken }),
      };
    },
    requests,
    violations,
    refusedSignatures,
    fault: undefined as CloudWatchFault | undefined,
    write: (m: MetricKey, p: Point[]) =>
      void points.set(keyOf(m.namespace, m.metricName, m.dimensions ?? {}), p),
    set: (m: MetricKey, v: number) =>
      void points.set(keyOf(m.namespace, m.metricName, m.dimensions ?? {}), v),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function statSeries(stat: Stat, start: number, end: number): Map<number, number> {
    const dimensions = Object.fromEntries((stat.Metric.Dimensions ?? []).map((d) => [d.Name, d.Value]));
    const stored = points.get(keyOf(stat.Metric.Namespace ?? '', stat.Metric.MetricName ?? '', dimensions));
    const period = stat.Period * 1000;
    const raw: Point[] =
      stored === undefined
        ? []
        : typeof stored === 'number'
          ? Array.from(
              { length: Math.floor((end - start) / 60_000) },
              (_, k) => [start + k * 60_000, stored] as Point,
            )
          : stored;
    const buckets = new Map<number, number[]>();
    for (const [t, v] of raw) {
      if (t < start || t >= end) continue;
      const bucket = start + Math.floor((t - start) / period) * period;
      buckets.set(bucket, [...(buckets.get(bucket) ?? []), v]);
    }
    return new Map([...buckets].map(([t, values]) => [t, statOf(values, stat.Stat)]));
  }

  function answer(input: Record<string, unknown>): string {
    const queries = input['MetricDataQueries'] as Query[];
    const start = (input['StartTime'] as Date).getTime();
    const end = (input['EndTime'] as Date).getTime();
    const series = new Map<string, Map<number, number>>();
    for (const q of queries) if (q.MetricStat) series.set(q.Id, statSeries(q.MetricStat, start, end));
    for (const q of queries) if (q.Expression !== undefined) series.set(q.Id, evaluate(q.Expression, series));
    const results = queries
      .filter((q) => q.ReturnData !== false)
      .map((q) => {
        // CloudWatch's default order is TimestampDescending.
        const entries = [...(series.get(q.Id) ?? new Map<number, number>())].sort(([a], [b]) => b - a);
        return `<member><Id>${xmlText(q.Id)}</Id><Label>${xmlText(q.Label ?? q.MetricStat?.Metric.MetricName ?? q.Id)}</Label><Timestamps>${entries.map(([t]) => `<member>${iso(t)}</member>`).join('')}</Timestamps><Values>${entries.map(([, v]) => `<member>${v}</member>`).join('')}</Values><StatusCode>Complete</StatusCode><Messages/></member>`;
      });
    return `<GetMetricDataResponse xmlns="${String((CLOUDWATCH_MODEL.serviceTraits['smithy.api#xmlNamespace'] as { uri: string }).uri)}"><GetMetricDataResult><MetricDataResults>${results.join('')}</MetricDataResults><Messages/></GetMetricDataResult><ResponseMetadata><RequestId>11111111-1111-1111-1111-111111111111</RequestId></ResponseMetadata></GetMetricDataResponse>`;
  }

  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'text/xml', ...fault.headers });
      return void res.end(
        fault.body ?? errorXml('InternalServiceError', `status ${fault.status}`, 'Receiver'),
      );
    }
    const send = (status: number, xml: string): void =>
      void res.writeHead(status, { 'content-type': 'text/xml' }).end(xml);
    const refusal = sigv4Refusal(
      { method: req.method ?? '', url: req.url ?? '/', headers: req.headers, body },
      {
        accessKeyId: double.accessKeyId,
        secretAccessKey: double.secretAccessKey,
        region: double.region,
        service: sigv4.name,
        ...(double.sessionToken !== undefined && { sessionToken: double.sessionToken }),
      },
    );
    if (refusal !== undefined) {
      refusedSignatures.push(refusal);
      return send(
        403,
        errorXml(
          'SignatureDoesNotMatch',
          `The request signature we calculated does not match the signature you provided (${refusal})`,
        ),
      );
    }
    const violate = (problem: string): void => {
      violations.push(problem);
      send(400, errorXml('InvalidParameterValue', problem));
    };
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://double').pathname !== '/')
      return violate('awsQuery is a POST to /');
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return violate('awsQuery bodies are application/x-www-form-urlencoded');
    const { input, problems } = decodeGetMetricData(body);
    if (problems.length > 0) return violate(problems.join('; '));
    requests.push(input);
    try {
      send(200, answer(input));
    } catch (error) {
      send(400, errorXml('InvalidParameterValue', (error as Error).message));
    }
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  double.endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return double;
}
