// A New Relic NerdGraph double: checks each GraphQL request against the part of NerdGraph's schema the provider uses, answers NRQL from rows the test wrote.
//
// The checked part of NerdGraph's schema (as New Relic publishes it and newrelic-client-go v2's nrdb package
// is generated from it): `Actor.account(id: Int!): Account`, `Account.nrql(query: Nrql!, timeout: Seconds,
// …): NrdbResultContainer`, `NrdbResultContainer.results: [NrdbResult]` (an NrdbResult is a JSON object).
// A request is a POST of `{query, variables}` as JSON with the key in `API-Key`. The document must be
// one query operation selecting exactly `actor { account(id: $a) { nrql(query: $q, timeout: $t) { results } } }`,
// its variables declared with the schema's types and given values of those types.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What the double does instead of answering (an outage). */
export type NerdGraphFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface NerdGraphRequest {
  path: string;
  apiKey: string | undefined;
  body: { query?: unknown; variables?: Record<string, unknown> } | undefined;
}

export interface NewRelicDouble {
  /** The `base-url-nerdgraph` to put in the profile Secret. */
  readonly url: string;
  readonly apiKey: string;
  readonly accountId: number;
  readonly requests: NerdGraphRequest[];
  /** Requests that broke the schema (each answered with a GraphQL error): tests expect none. */
  readonly violations: string[];
  /** The rows an NRQL query returns (replacing earlier ones). */
  rows(nrql: string, rows: Array<Record<string, unknown>>): void;
  /** A GraphQL error New Relic gives for `nrql` (e.g. an NRQL syntax error). */
  refuse(nrql: string, message: string): void;
  fault: NerdGraphFault | undefined;
  stop(): Promise<void>;
}

// Argument and variable types of the schema fields the provider selects.
const ARGUMENT_TYPES: Record<string, string[]> = {
  id: ['Int!'],
  query: ['Nrql!'],
  timeout: ['Seconds', 'Seconds!'],
};
const VALUE_CHECKS: Record<string, (v: unknown) => boolean> = {
  'Int!': (v) => typeof v === 'number' && Number.isInteger(v),
  'Nrql!': (v) => typeof v === 'string' && v !== '',
  Seconds: (v) => v === null || v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0),
  'Seconds!': (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0,
};

const DOCUMENT =
  /^query\s*(?:[A-Za-z_]\w*)?\s*\(([^)]*)\)\s*\{\s*actor\s*\{\s*account\s*\(\s*id\s*:\s*\$(\w+)\s*\)\s*\{\s*nrql\s*\(([^)]*)\)\s*\{\s*results\s*\}\s*\}\s*\}\s*\}$/;

/** Problems with a GraphQL request against the checked part of the schema; the NRQL sent when none. */
function checkDocument(body: NerdGraphRequest['body']): { problems: string[]; nrql?: string } {
  if (typeof body?.query !== 'string') return { problems: ['query: a GraphQL document string is required'] };
  const match = DOCUMENT.exec(body.query.trim());
  if (match === null)
    return { problems: ['the document is not one query of actor.account(id).nrql(query, timeout).results'] };
  const declared = new Map<string, string>();
  for (const def of (match[1] ?? '').split(',')) {
    const m = /^\s*\$(\w+)\s*:\s*(\w+!?)\s*$/.exec(def);
    if (m === null) return { problems: [`variable definition ${JSON.stringify(def.trim())} does not read`] };
    declared.set(m[1] as string, m[2] as string);
  }
  const uses: Array<[string, string]> = [['id', match[2] as string]];
  for (const arg of (match[3] ?? '').split(',')) {
    const m = /^\s*(\w+)\s*:\s*\$(\w+)\s*$/.exec(arg);
    if (m === null) return { problems: [`argument ${JSON.stringify(arg.trim())} is not a variable`] };
    uses.push([m[1] as string, m[2] as string]);
  }
  const problems: string[] = [];
  const variables = body.variables ?? {};
  let nrql: string | undefined;
  for (const [argument, variable] of uses) {
    const allowed = ARGUMENT_TYPES[argument];
    const type = declared.get(variable);
    if (allowed === undefined) problems.push(`NerdGraph has no argument ${argument} here`);
    else if (type === undefined) problems.push(`$${variable} is not declared`);
    else if (!allowed.includes(type))
      problems.push(`$${variable} is ${type}, ${argument} takes ${allowed.join(' or ')}`);
    else if (!VALUE_CHECKS[type]?.(variables[variable]))
      problems.push(`$${variable}: ${JSON.stringify(variables[variable])} is not a ${type}`);
    if (argument === 'query' && typeof variables[variable] === 'string') nrql = variables[variable];
  }
  if (!uses.some(([a]) => a === 'query')) problems.push('nrql: the query argument is required');
  return nrql === undefined ? { problems } : { problems, nrql };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Starts the double on a free loopback port. */
export async function startNewRelicDouble(): Promise<NewRelicDouble> {
  const rows = new Map<string, Array<Record<string, unknown>>>();
  const refusals = new Map<string, string>();
  const requests: NerdGraphRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const double = {
    url: '',
    apiKey: 'NRAK-4Q7Z2M9X1C5V8B3N6K0L2J4H7G',
    accountId: 3141592,
    requests,
    violations,
    fault: undefined as NerdGraphFault | undefined,
    rows: (nrql: string, list: Array<Record<string, unknown>>) => void rows.set(nrql.trim(), list),
    refuse: (nrql: string, message: string) => void refusals.set(nrql.trim(), message),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    let body: NerdGraphRequest['body'];
    try {
      body = JSON.parse(text) as NerdGraphRequest['body'];
    } catch {
      body = undefined;
    }
    const apiKey = req.headers['api-key'] as string | undefined;
    requests.push({ path: req.url ?? '', apiKey, body });
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(fault.body ?? JSON.stringify({ errors: [{ message: `status ${fault.status}` }] }));
    }
    const violate = (problem: string): void => {
      violations.push(problem);
      send(res, 200, { errors: [{ message: problem }] });
    };
    if (req.method !== 'POST' || req.url !== '/graphql')
      return violate(`${req.method ?? ''} ${req.url ?? ''}: NerdGraph takes POST /graphql`);
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return violate('the body must be JSON');
    if (apiKey !== double.apiKey)
      return send(res, 401, {
        errors: [{ message: 'Invalid API key', extensions: { errorClass: 'UNAUTHORIZED' } }],
      });
    const { problems, nrql } = checkDocument(body);
    if (problems.length > 0 || nrql === undefined) return violate(problems.join('; '));
    if (
      body?.variables?.['accountId'] !== double.accountId &&
      Object.values(body?.variables ?? {}).every((v) => v !== double.accountId)
    )
      return send(res, 200, {
        data: { actor: { account: null } },
        errors: [{ message: 'Account not found or not authorized', path: ['actor', 'account'] }],
      });
    const refusal = refusals.get(nrql.trim());
    if (refusal !== undefined)
      return send(res, 200, {
        data: { actor: { account: { nrql: null } } },
        errors: [{ message: refusal, path: ['actor', 'account', 'nrql'] }],
      });
    send(res, 200, { data: { actor: { account: { nrql: { results: rows.get(nrql.trim()) ?? [] } } } } });
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  double.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/graphql`;
  return double;
}
