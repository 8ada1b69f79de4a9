// An InfluxDB v2 double: checks each query request against InfluxDB's published OpenAPI description, runs a small Flux subset over points the test wrote, answers annotated CSV.
//
// The description is influxdata/openapi's contracts/oss.json (commit ad26a17); the part POST /api/v2/query
// (PostQuery) reaches is kept in ./api-models/influxdb-post-query.json (descriptions left out; the Flux
// AST schema `File` behind `extern`, which Rollgate never sends, cut to a bare object), and
// test/unit/analysis/published-api-excerpts.test.ts compares it with the mirror when one is fetched.
// The Flux the double runs is what the tests write: from(bucket) |> range(start: -Nm[, stop]) |>
// filter(fn: (r) => r["k"] == "v" [and …]) … |> mean() / sum() / last() / count(), |> yield().
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';

type Schema = {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean;
  enum?: unknown[];
  items?: Schema;
  uniqueItems?: boolean;
  maxLength?: number;
  minLength?: number;
  $ref?: string;
  format?: string;
};
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: Schema;
  $ref?: string;
}
interface Excerpt {
  servers: Array<{ url: string }>;
  path: string;
  method: string;
  operation: {
    operationId: string;
    parameters: Parameter[];
    requestBody: { content: Record<string, { schema: Schema }> };
    responses: Record<string, unknown>;
  };
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, Parameter>;
    securitySchemes: Record<string, { type: string; name?: string; in?: string }>;
  };
  security: Array<Record<string, unknown>>;
}

export const INFLUXDB_DESCRIPTION = JSON.parse(
  readFileSync(new URL('./api-models/influxdb-post-query.json', import.meta.url), 'utf8'),
) as Excerpt;

/** A point: a time (epoch ms), a value, and the tags it carries. */
export interface FluxPoint {
  time: number;
  value: number;
  tags?: Record<string, string>;
}
export type InfluxFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface InfluxdbDouble {
  readonly address: string;
  readonly org: string;
  readonly token: string;
  readonly requests: Array<{ org: string | null; body: unknown }>;
  readonly violations: string[];
  /** Points of `measurement`/`field` in `bucket` (added to earlier ones). */
  write(bucket: string, measurement: string, field: string, points: FluxPoint[]): void;
  /** Forgets every point. */
  clear(): void;
  fault: InfluxFault | undefined;
  stop(): Promise<void>;
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  const name = schema.$ref.split('/').at(-1) ?? '';
  return INFLUXDB_DESCRIPTION.components.schemas[name] ?? {};
}

/** What breaks `schema` in `value` (the keywords the excerpt uses; extra properties refused). */
export function schemaProblems(value: unknown, schema: Schema, at: string): string[] {
  const s = resolve(schema);
  const problems: string[] = [];
  if (s.enum !== undefined && !s.enum.includes(value))
    problems.push(`${at}: not one of ${JSON.stringify(s.enum)}`);
  switch (s.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return [`${at}: must be an object`];
      const record = value as Record<string, unknown>;
      for (const name of s.required ?? []) if (!(name in record)) problems.push(`${at}.${name}: required`);
      for (const [name, inner] of Object.entries(record)) {
        const property = s.properties?.[name];
        if (property !== undefined) problems.push(...schemaProblems(inner, property, `${at}.${name}`));
        else if (s.properties !== undefined && s.additionalProperties !== true)
          problems.push(`${at}.${name}: not a property of the schema`);
      }
      break;
    }
    case 'array':
      if (!Array.isArray(value)) return [`${at}: must be an array`];
      if (s.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
        problems.push(`${at}: items must be unique`);
      if (s.items)
        value.forEach((v, i) => problems.push(...schemaProblems(v, s.items as Schema, `${at}[${i}]`)));
      break;
    case 'string':
      if (typeof value !== 'string') return [`${at}: must be a string`];
      if (s.maxLength !== undefined && value.length > s.maxLength)
        problems.push(`${at}: longer than ${s.maxLength}`);
      if (s.minLength !== undefined && value.length < s.minLength)
        problems.push(`${at}: shorter than ${s.minLength}`);
      if (s.format === 'date-time' && Number.isNaN(Date.parse(value)))
        problems.push(`${at}: not a date-time`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${at}: must be a boolean`);
      break;
    default:
      break;
  }
  return problems;
}

interface Series {
  bucket: string;
  measurement: string;
  field: string;
  tags: Record<string, string>;
  points: Array<{ time: number; value: number }>;
}

const DURATION = /^-(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

class FluxError extends Error {}

/** Runs the Flux subset over `series` at `now`: the tables that come out, one per series with points. */
function runFlux(
  query: string,
  all: Series[],
  now: number,
): Array<{ series: Series; start: number; stop: number; rows: Array<{ time: number; value: number }> }> {
  const stages = query.split('|>').map((s) => s.trim());
  const from = /^from\(\s*bucket\s*:\s*"([^"]+)"\s*\)$/.exec(stages[0] ?? '');
  if (from === null) throw new FluxError('error calling function "from": missing required argument "bucket"');
  let start: number | undefined;
  let stop = now;
  let tables = all.filter((s) => s.bucket === from[1]);
  let reduce: string | undefined;
  for (const stage of stages.slice(1)) {
    const range = /^range\(\s*start\s*:\s*(-\w+)\s*(?:,\s*stop\s*:\s*(-\w+)\s*)?\)$/.exec(stage);
    if (range) {
      const [startMatch, stopMatch] = [
        DURATION.exec(range[1] ?? ''),
        range[2] ? DURATION.exec(range[2]) : null,
      ];
      if (startMatch === null) throw new FluxError(`invalid duration ${String(range[1])}`);
      start = now - Number(startMatch[1]) * (UNIT_MS[startMatch[2] ?? 'm'] ?? 0);
      if (stopMatch) stop = now - Number(stopMatch[1]) * (UNIT_MS[stopMatch[2] ?? 'm'] ?? 0);
      continue;
    }
    const filter = /^filter\(\s*fn\s*:\s*\(r\)\s*=>\s*(.+)\)$/s.exec(stage);
    if (filter) {
      const terms = (filter[1] ?? '').split(/\s+and\s+/);
      for (const term of terms) {
        const eq = /^r(?:\["([^"]+)"\]|\.(\w+))\s*==\s*"([^"]*)"$/.exec(term.trim());
        if (eq === null) throw new FluxError(`the double cannot read the predicate ${term}`);
        const [key, value] = [eq[1] ?? eq[2] ?? '', eq[3]];
        tables = tables.filter((s) =>
          key === '_measurement'
            ? s.measurement === value
            : key === '_field'
              ? s.field === value
              : s.tags[key] === value,
        );
      }
      continue;
    }
    const call = /^(mean|sum|last|count|yield)\(.*\)$/.exec(stage);
    if (call) {
      if (call[1] !== 'yield') reduce = call[1];
      continue;
    }
    throw new FluxError(`the double cannot run ${stage}`);
  }
  if (start === undefined)
    throw new FluxError(
      'cannot submit unbounded read to "bucket"; try bounding "from" with a call to "range"',
    );
  const windowStart = start;
  return tables
    .map((series) => {
      const inside = series.points
        .filter((p) => p.time >= windowStart && p.time < stop)
        .sort((a, b) => a.time - b.time);
      if (inside.length === 0) return undefined;
      const values = inside.map((p) => p.value);
      const rows =
        reduce === undefined
          ? inside
          : [
              {
                time: stop,
                value:
                  reduce === 'mean'
                    ? values.reduce((a, b) => a + b, 0) / values.length
                    : reduce === 'sum'
                      ? values.reduce((a, b) => a + b, 0)
                      : reduce === 'count'
                        ? values.length
                        : (values.at(-1) ?? 0),
              },
            ];
      return { series, start: windowStart, stop, rows };
    })
    .filter((t): t is NonNullable<typeof t> => t !== undefined);
}

const csvField = (text: string): string => (/[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The tables as InfluxDB writes annotated CSV: each with its annotations and header, a blank line between. */
function annotatedCsv(tables: ReturnType<typeof runFlux>): string {
  return tables
    .map((table, index) => {
      const tagNames = Object.keys(table.series.tags).sort();
      const columns = [
        'result',
        'table',
        '_start',
        '_stop',
        '_time',
        '_value',
        '_field',
        '_measurement',
        ...tagNames,
      ];
      const types = [
        'string',
        'long',
        'dateTime:RFC3339',
        'dateTime:RFC3339',
        'dateTime:RFC3339',
        'double',
        'string',
        'string',
        ...tagNames.map(() => 'string'),
      ];
      const group = columns.map((c) => String(!['result', 'table', '_time', '_value'].includes(c)));
      const lines = [
        ['#datatype', ...types],
        ['#group', ...group.map((g, i) => (i === 1 ? 'false' : g))],
        ['#default', '_result', ...columns.slice(1).map(() => '')],
        ['', ...columns],
        ...table.rows.map((row) => [
          '',
          '',
          String(index),
          rfc3339(table.start),
          rfc3339(table.stop),
          rfc3339(row.time),
          String(row.value),
          table.series.field,
          table.series.measurement,
          ...tagNames.map((t) => table.series.tags[t] ?? ''),
        ]),
      ];
      return lines.map((l) => l.map(csvField).join(',')).join('\r\n');
    })
    .join('\r\n\r\n')
    .concat('\r\n\r\n');
}

/** Starts the double on a free loopback port; a query's `now` is the request's, else `now()`. */
export async function startInfluxdbDouble(now: () => number = Date.now): Promise<InfluxdbDouble> {
  const series: Series[] = [];
  const requests: Array<{ org: string | null; body: unknown }> = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const base = INFLUXDB_DESCRIPTION.servers[0]?.url ?? '/api/v2';
  const operation = INFLUXDB_DESCRIPTION.operation;
  const parameters = operation.parameters.map((p) =>
    p.$ref ? (INFLUXDB_DESCRIPTION.components.parameters[p.$ref.split('/').at(-1) ?? ''] as Parameter) : p,
  );
  const [schemeName] = Object.keys(INFLUXDB_DESCRIPTION.security[0] ?? {});
  const scheme = INFLUXDB_DESCRIPTION.components.securitySchemes[schemeName ?? ''];
  const double = {
    address: '',
    org: 'rollgate',
    token: 'influx-token-3c9f1e7a5b',
    requests,
    violations,
    fault: undefined as InfluxFault | undefined,
    write(bucket: string, measurement: string, field: string, points: FluxPoint[]) {
      for (const p of points) {
        const tags = p.tags ?? {};
        let s = series.find(
          (x) =>
            x.bucket === bucket &&
            x.measurement === measurement &&
            x.field === field &&
            JSON.stringify(x.tags) === JSON.stringify(tags),
        );
        if (s === undefined) {
          s = { bucket, measurement, field, tags, points: [] };
          series.push(s);
        }
        s.points.push({ time: p.time, value: p.value });
      }
    },
    clear: () => void series.splice(0),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const json = (res: ServerResponse, status: number, body: unknown): void =>
    void res
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify(body));

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(
        fault.body ?? JSON.stringify({ code: 'internal error', message: `status ${fault.status}` }),
      );
    }
    const url = new URL(req.url ?? '/', 'http://double');
    const violate = (problem: string): void => {
      violations.push(problem);
      json(res, 400, { code: 'invalid', message: problem });
    };
    if (url.pathname !== `${base}${INFLUXDB_DESCRIPTION.path}`)
      return json(res, 404, { code: 'not found', message: 'path not found' });
    if ((req.method ?? '').toLowerCase() !== INFLUXDB_DESCRIPTION.method)
      return violate(`${operation.operationId} is a ${INFLUXDB_DESCRIPTION.method}`);
    // TokenAuthentication: the Authorization header, `Token <token>`.
    if (scheme?.in !== 'header' || req.headers[(scheme.name ?? '').toLowerCase()] !== `Token ${double.token}`)
      return json(res, 401, { code: 'unauthorized', message: 'unauthorized access' });
    const problems: string[] = [];
    for (const p of parameters) {
      const raw =
        p.in === 'query'
          ? url.searchParams.get(p.name)
          : p.in === 'header'
            ? req.headers[p.name.toLowerCase()]
            : undefined;
      if (raw === undefined || raw === null) {
        if (p.required) problems.push(`${p.in} ${p.name}: required`);
        continue;
      }
      const value =
        p.in === 'header' && p.name.toLowerCase() === 'content-type'
          ? String(raw).split(';')[0]?.trim()
          : raw;
      problems.push(...schemaProblems(value, p.schema ?? {}, `${p.in} ${p.name}`));
    }
    const known = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
    for (const name of url.searchParams.keys())
      if (!known.has(name)) problems.push(`query ${name}: not a parameter of ${operation.operationId}`);
    const mediaType =
      String(req.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    const content = operation.requestBody.content[mediaType];
    if (content === undefined) problems.push(`content-type ${mediaType}: not one the operation takes`);
    let body: unknown = text;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        problems.push('the body is not JSON');
      }
    }
    if (content !== undefined && problems.length === 0)
      problems.push(...schemaProblems(body, content.schema, 'body'));
    if (problems.length > 0) return violate(problems.join('; '));
    requests.push({ org: url.searchParams.get('org'), body });
    if (url.searchParams.get('org') !== double.org)
      return json(res, 404, {
        code: 'not found',
        message: `organization name "${String(url.searchParams.get('org'))}" not found`,
      });
    const query = typeof body === 'string' ? body : String((body as { query: string }).query);
    try {
      const asked = typeof body === 'object' && body !== null ? (body as { now?: string }).now : undefined;
      const tables = runFlux(query, series, asked === undefined ? now() : Date.parse(asked));
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(annotatedCsv(tables));
    } catch (error) {
      if (!(error instanceof FluxError)) throw error;
      json(res, 400, { code: 'invalid', message: `compilation failed: ${error.message}` });
    }
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  double.address = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return double;
}
