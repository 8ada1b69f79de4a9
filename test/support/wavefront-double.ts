// A Wavefront REST API double: checks each request against Wavefront's published description of queryApi, answers from points the test wrote.
//
// The description is the excerpt in vendor-api/wavefront-query-api.json (its `source` names the file and
// commit it was cut from): GET /api/v2/chart/api, its query parameters (required ones, types, enums; any
// other parameter is a violation), the api_key security scheme (X-AUTH-TOKEN) — Wavefront's REST API page
// documents the same token as `Authorization: Bearer`, which is what Argo's client sends; the double takes
// either — and QueryResult / Timeseries for the answer (points are [epoch seconds, value]).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

interface SwaggerParameter {
  name: string;
  in: string;
  required: boolean;
  type: string;
  enum?: string[];
}

/** The excerpt of Wavefront's REST API description the double checks requests against. */
export const WAVEFRONT_QUERY_API = JSON.parse(
  readFileSync(new URL('./vendor-api/wavefront-query-api.json', import.meta.url), 'utf8'),
) as {
  source: { repository: string; commit: string; path: string };
  securityDefinitions: { api_key: { in: string; name: string } };
  paths: Record<string, { get: { operationId: string; parameters: SwaggerParameter[] } }>;
  definitions: Record<string, { properties: Record<string, unknown> }>;
};

const QUERY_PATH = '/api/v2/chart/api';
function queryOperation(): { operationId: string; parameters: SwaggerParameter[] } {
  const operation = WAVEFRONT_QUERY_API.paths[QUERY_PATH]?.get;
  if (operation === undefined) throw new Error('the Wavefront excerpt has no GET /api/v2/chart/api');
  return operation;
}
const OPERATION = queryOperation();
const PARAMETERS = OPERATION.parameters;

/** A point: epoch seconds and a value. */
export type WavefrontPoint = [number, number];
/** A series the double answers: its label and points, or a value it holds at any time asked. */
export type WavefrontSeries = { label: string; points: WavefrontPoint[] } | { label: string; value: number };

/** What the double does instead of answering (an outage). */
export type WavefrontFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface WavefrontRequest {
  path: string;
  params: URLSearchParams;
  authorization: string | undefined;
}

export interface WavefrontDouble {
  /** The metric's `address`: a loopback URL (the Rollgate form), its token under `tokenKey`. */
  readonly address: string;
  /** The key of `wavefront-api-tokens` holding the token (the address's host). */
  readonly tokenKey: string;
  readonly token: string;
  readonly requests: WavefrontRequest[];
  /** Requests that broke the description (each answered 400): tests expect none. */
  readonly violations: string[];
  /** The series a query returns (replacing earlier ones). */
  write(query: string, series: WavefrontSeries[]): void;
  /** One series holding `value` at any time asked. */
  set(query: string, value: number): void;
  /** The query ends in Wavefront's error (QueryResult errorType/errorMessage). */
  refuse(query: string, errorType: string, errorMessage: string): void;
  fault: WavefrontFault | undefined;
  stop(): Promise<void>;
}

/** What is wrong with the query parameters, by the description. */
function parameterProblems(params: URLSearchParams): string[] {
  const problems: string[] = [];
  const known = new Set(PARAMETERS.map((p) => p.name));
  for (const name of params.keys()) if (!known.has(name)) problems.push(`unknown query parameter ${name}`);
  for (const p of PARAMETERS) {
    const value = params.get(p.name);
    if (value === null) {
      if (p.required) problems.push(`query parameter ${p.name} is required`);
      continue;
    }
    if (p.type === 'boolean' && value !== 'true' && value !== 'false')
      problems.push(`${p.name} must be a boolean, got ${JSON.stringify(value)}`);
    if (p.enum !== undefined && !p.enum.includes(value))
      problems.push(`${p.name} must be one of ${p.enum.join(', ')}, got ${JSON.stringify(value)}`);
  }
  // s and e are "epoch milliseconds" in their descriptions.
  for (const name of ['s', 'e']) {
    const value = params.get(name);
    if (value !== null && !/^\d{13}$/.test(value))
      problems.push(`${name} must be epoch milliseconds, got ${JSON.stringify(value)}`);
  }
  return problems;
}

function answerSeries(series: WavefrontSeries, fromSec: number, toSec: number, onePoint: boolean) {
  if ('value' in series)
    return { label: series.label, host: 'double', tags: {}, data: [[toSec, series.value]] };
  let data = series.points.filter(([t]) => t >= fromSec && t <= toSec);
  if (onePoint) {
    // p=1 and i=true: the point nearest the window (what Wavefront does for a window of one instant).
    const nearest = [...series.points].sort((a, b) => Math.abs(a[0] - toSec) - Math.abs(b[0] - toSec))[0];
    data = nearest === undefined ? [] : [nearest];
  }
  return { label: series.label, host: 'double', tags: {}, data };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Starts the double on a free loopback port. */
export async function startWavefrontDouble(): Promise<WavefrontDouble> {
  const queries = new Map<string, WavefrontSeries[]>();
  const refusals = new Map<string, { errorType: string; errorMessage: string }>();
  const requests: WavefrontRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const double = {
    address: '',
    tokenKey: '127.0.0.1',
    token: 'a411c16b-3cf7-4f03-bf11-8ca05aab898d',
    requests,
    violations,
    fault: undefined as WavefrontFault | undefined,
    write: (query: string, series: WavefrontSeries[]) => void queries.set(query, series),
    set: (query: string, value: number) => void queries.set(query, [{ label: query, value }]),
    refuse: (query: string, errorType: string, errorMessage: string) =>
      void refusals.set(query, { errorType, errorMessage }),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://double');
    const authorization = req.headers['authorization'];
    requests.push({ path: url.pathname, params: url.searchParams, authorization });
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(
        fault.body ??
          JSON.stringify({
            status: { result: 'ERROR', message: `status ${fault.status}`, code: fault.status },
          }),
      );
    }
    const violate = (problem: string): void => {
      violations.push(`${req.method ?? ''} ${url.pathname}: ${problem}`);
      send(res, 400, { status: { result: 'ERROR', message: problem, code: 400 } });
    };
    if (url.pathname !== QUERY_PATH || req.method !== 'GET')
      return violate(`${OPERATION.operationId} is GET ${QUERY_PATH}`);
    const tokenHeader = WAVEFRONT_QUERY_API.securityDefinitions.api_key.name.toLowerCase();
    const given =
      req.headers[tokenHeader] ?? (authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined);
    if (given !== double.token)
      return send(res, 401, { status: { result: 'ERROR', message: 'Unauthorized', code: 401 } });
    const problems = parameterProblems(url.searchParams);
    if (problems.length > 0) return violate(problems.join('; '));
    const query = url.searchParams.get('q') ?? '';
    const refusal = refusals.get(query);
    if (refusal !== undefined) return send(res, 200, { query, name: query, timeseries: [], ...refusal });
    const fromSec = Math.floor(Number(url.searchParams.get('s')) / 1000);
    const toSec = Math.floor(Number(url.searchParams.get('e') ?? url.searchParams.get('s')) / 1000);
    const onePoint = url.searchParams.get('p') === '1' && url.searchParams.get('i') !== 'false';
    send(res, 200, {
      query,
      name: query,
      granularity: 1,
      timeseries: (queries.get(query) ?? []).map((s) => answerSeries(s, fromSec, toSec, onePoint)),
    });
  };

  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  double.address = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return double;
}
