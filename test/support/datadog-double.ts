// A Datadog API double: checks each request against the shape Datadog publishes, answers from points the test wrote.
//
// The checked shape is the part of Datadog's OpenAPI description the provider uses, from
// DataDog/datadog-api-client-typescript 1.62.0 (commit a6d1742): `.generator/schemas/v1/openapi.yaml`,
// operation QueryMetrics (GET /api/v1/query: `from`, `to` int64 and `query` string, all required, in the
// query; MetricsQueryResponse; APIErrorResponse `{errors: [string]}`) and `.generator/schemas/v2/openapi.yaml`,
// operation QueryScalarData (POST /api/v2/query/scalar: ScalarFormulaQueryRequest `{data: {type:
// scalar_request, attributes: {from, to (int64, required), queries (required), formulas?}}}`, a
// MetricsScalarQuery `{data_source, query, aggregator (required), name?}`, QueryFormula `{formula
// (required), limit?}`; ScalarFormulaQueryResponse with DataScalarColumn / GroupScalarColumn), both
// secured by the apiKeyAuth (DD-API-KEY) and appKeyAuth (DD-APPLICATION-KEY) headers.
// test/unit/analysis/datadog-published-shape.test.ts compares V1_QUERY_PARAMETERS and the key headers
// with the v1 file in a fetched mirror; the v2 file is larger than the mirror keeps, so its part is
// written here from it by hand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** GET /api/v1/query's parameters as the v1 description declares them. */
export const V1_QUERY_PARAMETERS = [
  { name: 'from', type: 'integer', required: true },
  { name: 'to', type: 'integer', required: true },
  { name: 'query', type: 'string', required: true },
] as const;
/** The two key headers (securitySchemes apiKeyAuth and appKeyAuth). */
export const KEY_HEADERS = { apiKey: 'DD-API-KEY', appKey: 'DD-APPLICATION-KEY' } as const;
/** MetricsAggregator and MetricsDataSource enums of the v2 description. */
export const V2_AGGREGATORS = ['avg', 'min', 'max', 'sum', 'last', 'percentile', 'mean', 'l2norm', 'area'];
export const V2_DATA_SOURCES = ['metrics', 'cloud_cost'];

/** A point: epoch milliseconds and a value. */
export type Point = [number, number | null];

/** What the double does instead of answering (an outage). */
export type DatadogFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface DatadogRequest {
  method: string;
  path: string;
  params: URLSearchParams;
  body: unknown;
}

export interface DatadogDouble {
  /** The `address` to put in the `datadog` Secret. */
  readonly address: string;
  readonly apiKey: string;
  readonly appKey: string;
  /** Every request received, in order. */
  readonly requests: DatadogRequest[];
  /** Requests that broke the published shape (each was answered 400): tests expect none. */
  readonly violations: string[];
  /** The points `query` has (replacing earlier ones). */
  write(query: string, points: Point[]): void;
  /** A series that holds `value` at any time asked (one point at each end of the window). */
  set(query: string, value: number): void;
  /** An answer of Datadog's own for `query`: status and its errors list. */
  refuse(query: string, status: number, errors: string[]): void;
  /** Set to make every request fail this way until cleared. */
  fault: DatadogFault | undefined;
  stop(): Promise<void>;
}

type Series = { points: Point[] } | { value: number };

function inWindow(series: Series | undefined, fromMs: number, toMs: number): Point[] {
  if (series === undefined) return [];
  if ('value' in series)
    return [
      [fromMs, series.value],
      [toMs, series.value],
    ];
  return series.points.filter(([t]) => t >= fromMs && t <= toMs);
}

function aggregate(values: number[], aggregator: string): number | null {
  if (values.length === 0) return null;
  const sum = values.reduce((a, b) => a + b, 0);
  switch (aggregator) {
    case 'avg':
    case 'mean':
      return sum / values.length;
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'sum':
    case 'area':
      return sum;
    case 'l2norm':
      return Math.sqrt(values.reduce((a, b) => a + b * b, 0));
    case 'percentile': {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] ?? null;
    }
    default:
      return values[values.length - 1] ?? null; // last
  }
}

/** A formula of query names, numbers, + - * / and parentheses (what the tests write). */
function evaluateFormula(formula: string, values: Record<string, number | null>): number | null {
  const tokens = formula.match(/[A-Za-z_]\w*|\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let i = 0;
  const primary = (): number | null => {
    const token = tokens[i++];
    if (token === '(') {
      const inner = sum();
      i++;
      return inner;
    }
    if (token === '-') {
      const v = primary();
      return v === null ? null : -v;
    }
    if (token !== undefined && /^\d/.test(token)) return Number(token);
    if (token === undefined || !(token in values))
      throw new Error(`unknown name ${String(token)} in formula`);
    return values[token] ?? null;
  };
  const product = (): number | null => {
    let left = primary();
    while (tokens[i] === '*' || tokens[i] === '/') {
      const op = tokens[i++];
      const right = primary();
      left = left === null || right === null ? null : op === '*' ? left * right : left / right;
    }
    return left;
  };
  const sum = (): number | null => {
    let left = product();
    while (tokens[i] === '+' || tokens[i] === '-') {
      const op = tokens[i++];
      const right = product();
      left = left === null || right === null ? null : op === '+' ? left + right : left - right;
    }
    return left;
  };
  return sum();
}

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v);
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is wrong with a v2 scalar request body, by the published ScalarFormulaQueryRequest. */
function scalarRequestProblems(body: unknown): string[] {
  const problems: string[] = [];
  const data = isRecord(body) ? body['data'] : undefined;
  if (!isRecord(data)) return ['data: required object'];
  if (data['type'] !== 'scalar_request') problems.push('data.type: must be "scalar_request"');
  const attributes = data['attributes'];
  if (!isRecord(attributes)) return [...problems, 'data.attributes: required object'];
  for (const field of ['from', 'to'])
    if (!isInt(attributes[field])) problems.push(`data.attributes.${field}: required int64`);
  const queries = attributes['queries'];
  if (!Array.isArray(queries)) problems.push('data.attributes.queries: required array');
  else
    queries.forEach((q: unknown, i) => {
      const at = `data.attributes.queries[${i}]`;
      if (!isRecord(q)) return void problems.push(`${at}: object`);
      if (!V2_DATA_SOURCES.includes(String(q['data_source']))) problems.push(`${at}.data_source: enum`);
      if (typeof q['query'] !== 'string') problems.push(`${at}.query: required string`);
      if (!V2_AGGREGATORS.includes(String(q['aggregator']))) problems.push(`${at}.aggregator: required enum`);
      if (q['name'] !== undefined && typeof q['name'] !== 'string') problems.push(`${at}.name: string`);
    });
  const formulas = attributes['formulas'];
  if (formulas !== undefined) {
    if (!Array.isArray(formulas)) problems.push('data.attributes.formulas: array');
    else
      formulas.forEach((f: unknown, i) => {
        if (!isRecord(f) || typeof f['formula'] !== 'string')
          problems.push(`data.attributes.formulas[${i}].formula: required string`);
      });
  }
  return problems;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Starts the double on a free loopback port. */
export async function startDatadogDouble(): Promise<DatadogDouble> {
  const series = new Map<string, Series>();
  const refusals = new Map<string, { status: number; errors: string[] }>();
  const requests: DatadogRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const double = {
    address: '',
    apiKey: 'dd-api-key-5b1e0c7d9a',
    appKey: 'dd-app-key-2f8c4e6a1b',
    requests,
    violations,
    fault: undefined as DatadogFault | undefined,
    write: (query: string, points: Point[]) => void series.set(query, { points }),
    set: (query: string, value: number) => void series.set(query, { value }),
    refuse: (query: string, status: number, errors: string[]) => void refusals.set(query, { status, errors }),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const url = new URL(req.url ?? '/', 'http://double');
    let body: unknown;
    try {
      body = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      body = text;
    }
    requests.push({ method: req.method ?? '', path: url.pathname, params: url.searchParams, body });
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(fault.body ?? JSON.stringify({ errors: [`status ${fault.status}`] }));
    }
    const violate = (problem: string): void => {
      violations.push(`${req.method ?? ''} ${url.pathname}: ${problem}`);
      send(res, 400, { errors: [problem] });
    };
    if (
      req.headers[KEY_HEADERS.apiKey.toLowerCase()] !== double.apiKey ||
      req.headers[KEY_HEADERS.appKey.toLowerCase()] !== double.appKey
    )
      return send(res, 403, { errors: ['Forbidden'] });

    if (url.pathname === '/api/v1/query') {
      if (req.method !== 'GET') return violate('QueryMetrics is a GET');
      for (const p of V1_QUERY_PARAMETERS) {
        const value = url.searchParams.get(p.name);
        if (value === null) return violate(`query parameter ${p.name} is required`);
        if (p.type === 'integer' && !/^-?\d+$/.test(value)) return violate(`${p.name} must be an int64`);
      }
      const known = new Set<string>(V1_QUERY_PARAMETERS.map((p) => p.name));
      for (const name of url.searchParams.keys())
        if (!known.has(name)) return violate(`unknown query parameter ${name}`);
      const query = url.searchParams.get('query') ?? '';
      const refusal = refusals.get(query);
      if (refusal) return send(res, refusal.status, { errors: refusal.errors });
      const fromMs = Number(url.searchParams.get('from')) * 1000;
      const toMs = Number(url.searchParams.get('to')) * 1000;
      const points = inWindow(series.get(query), fromMs, toMs);
      return send(res, 200, {
        status: 'ok',
        res_type: 'time_series',
        query,
        from_date: fromMs,
        to_date: toMs,
        series:
          points.length === 0 ? [] : [{ metric: query, expression: query, scope: '*', pointlist: points }],
      });
    }

    if (url.pathname === '/api/v2/query/scalar') {
      if (req.method !== 'POST') return violate('QueryScalarData is a POST');
      if (!String(req.headers['content-type']).startsWith('application/json'))
        return violate('the body must be application/json');
      const problems = scalarRequestProblems(body);
      if (problems.length > 0) return violate(problems.join('; '));
      const attributes = (body as { data: { attributes: Record<string, unknown> } }).data.attributes;
      const queries = attributes['queries'] as Array<{ name?: string; query: string; aggregator: string }>;
      for (const q of queries) {
        const refusal = refusals.get(q.query);
        if (refusal) return send(res, refusal.status, { errors: refusal.errors });
      }
      const [fromMs, toMs] = [attributes['from'] as number, attributes['to'] as number];
      const values: Record<string, number | null> = {};
      queries.forEach((q, i) => {
        const points = inWindow(series.get(q.query), fromMs, toMs);
        values[q.name ?? `query${i + 1}`] = aggregate(
          points.map(([, v]) => v).filter((v): v is number => v !== null),
          q.aggregator,
        );
      });
      const formulas = (attributes['formulas'] as Array<{ formula: string }> | undefined) ?? [];
      let columns: Array<{ name: string; values: Array<number | null> }>;
      try {
        columns =
          formulas.length > 0
            ? formulas.map((f) => ({ name: f.formula, values: [evaluateFormula(f.formula, values)] }))
            : Object.entries(values).map(([name, v]) => ({ name, values: [v] }));
      } catch (error) {
        return send(res, 400, { errors: [(error as Error).message] });
      }
      return send(res, 200, {
        data: {
          type: 'scalar_response',
          attributes: {
            columns: columns.map((c) => ({
              name: c.name,
              type: 'number',
              values: c.values.every((v) => v === null) ? [] : c.values,
              meta: { unit: null },
            })),
          },
        },
      });
    }
    send(res, 404, { errors: ['Not found'] });
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
