// A SkyWalking OAP double: parses, validates and executes each GraphQL query against SkyWalking's published schema, answering from values the test wrote.
//
// The schema is the excerpt in vendor-api/skywalking-metrics.graphqls (its header names the files and
// commit of apache/skywalking-query-protocol it was cut from): graphql-js builds it, every document is
// validated against it and its variables coerced to their declared types (Duration, MetricsCondition, …),
// so a query SkyWalking would refuse is a violation here. Besides the schema, the OAP server reads a
// MINUTE-step Duration's bounds as `yyyy-MM-dd HHmm`; the double checks that too.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { buildSchema, execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';

/** The schema excerpt, as text. */
export const SKYWALKING_SCHEMA_TEXT = readFileSync(
  new URL('./vendor-api/skywalking-metrics.graphqls', import.meta.url),
  'utf8',
);
const SCHEMA: GraphQLSchema = buildSchema(SKYWALKING_SCHEMA_TEXT);

// The OAP server's time formats by step (DurationUtils): MINUTE is `yyyy-MM-dd HHmm`.
const STEP_FORMATS: Record<string, RegExp> = {
  DAY: /^\d{4}-\d{2}-\d{2}$/,
  HOUR: /^\d{4}-\d{2}-\d{2} \d{2}$/,
  MINUTE: /^\d{4}-\d{2}-\d{2} \d{4}$/,
  SECOND: /^\d{4}-\d{2}-\d{2} \d{6}$/,
};

/** What the double does instead of answering (an outage). */
export type SkyWalkingFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface SkyWalkingRequest {
  path: string;
  body: { query?: unknown; variables?: Record<string, unknown> } | undefined;
}

export interface SkyWalkingDouble {
  /** The metric's `address` (the double serves `/graphql` under it). */
  readonly address: string;
  readonly requests: SkyWalkingRequest[];
  /** Requests that broke the schema or the OAP's formats (each answered with a GraphQL error): tests expect none. */
  readonly violations: string[];
  /** The value a metric has for a service in every minute asked. */
  set(metric: string, service: string, value: number): void;
  /** Reading `metric` fails with SkyWalking's error `message`. */
  refuse(metric: string, message: string): void;
  fault: SkyWalkingFault | undefined;
  stop(): Promise<void>;
}

interface Condition {
  name: string;
  entity: { serviceName?: string | null };
}
interface Duration {
  start: string;
  end: string;
  step: string;
}

/** The minutes between two `yyyy-MM-dd HHmm` bounds, inclusive (at most a day's worth). */
function minutes(duration: Duration): string[] {
  const read = (text: string): number =>
    Date.UTC(
      Number(text.slice(0, 4)),
      Number(text.slice(5, 7)) - 1,
      Number(text.slice(8, 10)),
      Number(text.slice(11, 13)),
      Number(text.slice(13, 15)),
    );
  const out: string[] = [];
  for (let t = read(duration.start); t <= read(duration.end) && out.length < 1440; t += 60_000)
    out.push(String(t / 1000));
  return out;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Starts the double on a free loopback port. */
export async function startSkyWalkingDouble(): Promise<SkyWalkingDouble> {
  const values = new Map<string, number>();
  const refusals = new Map<string, string>();
  const requests: SkyWalkingRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const double = {
    address: '',
    requests,
    violations,
    fault: undefined as SkyWalkingFault | undefined,
    set: (metric: string, service: string, value: number) => void values.set(`${metric}\n${service}`, value),
    refuse: (metric: string, message: string) => void refusals.set(metric, message),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  // One series per minute of the duration; no value written reads as SkyWalking's empty values.
  const series = (condition: Condition, duration: Duration) => {
    const refusal = refusals.get(condition.name);
    if (refusal !== undefined) throw new Error(refusal);
    if (
      !STEP_FORMATS[duration.step]?.test(duration.start) ||
      !STEP_FORMATS[duration.step]?.test(duration.end)
    )
      violations.push(`duration ${JSON.stringify(duration)} is not in the OAP's ${duration.step} format`);
    const value = values.get(`${condition.name}\n${condition.entity.serviceName ?? ''}`);
    return minutes(duration).map((id) => ({ id, value: value ?? 0, isEmptyValue: value === undefined }));
  };
  const root = {
    version: () => 'double',
    readMetricsValues: (args: { condition: Condition; duration: Duration }) => ({
      label: null,
      values: { values: series(args.condition, args.duration) },
    }),
    readLabeledMetricsValues: (args: { condition: Condition; labels: string[]; duration: Duration }) =>
      args.labels.map((label) => ({ label, values: { values: series(args.condition, args.duration) } })),
    readMetricsValue: (args: { condition: Condition; duration: Duration }) => {
      const points = series(args.condition, args.duration).filter((p) => !p.isEmptyValue);
      return points.length === 0 ? 0 : Math.round(points.reduce((a, p) => a + p.value, 0) / points.length);
    },
    readNullableMetricsValue: (args: { condition: Condition; duration: Duration }) => {
      const points = series(args.condition, args.duration).filter((p) => !p.isEmptyValue);
      return points.length === 0
        ? { value: 0, isEmptyValue: true }
        : { value: Math.round(points.reduce((a, p) => a + p.value, 0) / points.length), isEmptyValue: false };
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, text: string): Promise<void> => {
    let body: SkyWalkingRequest['body'];
    try {
      body = JSON.parse(text) as SkyWalkingRequest['body'];
    } catch {
      body = undefined;
    }
    requests.push({ path: req.url ?? '', body });
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
      return violate(`${req.method ?? ''} ${req.url ?? ''}: the OAP serves GraphQL at POST /graphql`);
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return violate('the body must be JSON');
    if (typeof body?.query !== 'string') return violate('query: a GraphQL document string is required');
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (error) {
      return violate(`the document does not parse: ${(error as Error).message}`);
    }
    const invalid = validate(SCHEMA, document);
    if (invalid.length > 0) return violate(invalid.map((e) => e.message).join('; '));
    const result = await execute({
      schema: SCHEMA,
      document,
      rootValue: root,
      variableValues: body.variables ?? {},
    });
    // Variables that do not coerce to their declared types fail before any field runs.
    if (result.data === undefined && result.errors !== undefined)
      return violate(result.errors.map((e) => e.message).join('; '));
    send(res, 200, result);
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => void handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  double.address = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return double;
}
