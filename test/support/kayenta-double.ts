// A Kayenta double: checks each request against Kayenta's published REST API (the part a canary judgement uses), judges control against experiment from values the test wrote.
//
// The API is the excerpt in vendor-api/kayenta-canary-api.json (its `source` names the controllers and
// models of spinnaker/kayenta it was written from): which routes exist, which query parameters each
// takes (any other is a violation), and JSON Schemas of the bodies, checked with Ajv (CanaryScope's start
// and end are Instants: date-times). Kayenta resolves an account name it does not know with a 400
// `{message}`, as its ControllerExceptionHandler answers; so does the double. The judge is the double's
// own, simple and predictable: a metric passes when the experiment's mean is at most 10 % above the
// control's; the score is the share of metrics that pass, in percent.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Operation {
  method: string;
  path: string;
  query: string[];
  body?: string;
}

/** The excerpt of Kayenta's REST API the double checks requests against. */
export const KAYENTA_CANARY_API = JSON.parse(
  readFileSync(new URL('./vendor-api/kayenta-canary-api.json', import.meta.url), 'utf8'),
) as {
  source: { repository: string; commit: string; files: { controllers: string; models: string } };
  operations: Record<string, Operation & { controller: string }>;
  definitions: Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
};

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema({ definitions: KAYENTA_CANARY_API.definitions }, 'kayenta');
const bodyCheck = (name: string): ValidateFunction => {
  const check = ajv.getSchema(`kayenta#/definitions/${name}`);
  if (check === undefined) throw new Error(`no ${name} in the Kayenta excerpt`);
  return check;
};

/** The accounts the double knows (Kayenta's default of each kind is the first). */
export const KAYENTA_ACCOUNTS = {
  metrics: ['prometheus-account'],
  configuration: ['config-store'],
  storage: ['result-store'],
} as const;

/** What the double does instead of answering (an outage). */
export type KayentaFault = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface KayentaRequest {
  method: string;
  operation: string;
  path: string;
  params: URLSearchParams;
  body: unknown;
}

export interface KayentaDouble {
  /** The metric's `address`. */
  readonly address: string;
  readonly requests: KayentaRequest[];
  /** Requests that broke the API (each answered 400): tests expect none. */
  readonly violations: string[];
  /** Stores a canary config judging `metrics` for `application`; returns its id. */
  addConfig(config: { name: string; application: string; metrics: string[] }): string;
  /** The value `metric` has in the scope `scope` (the scope's selector as sent, or a pattern it matches). */
  set(scope: string | RegExp, metric: string, value: number): void;
  /** How many status reads answer `complete: false` before the judgement completes (default 1). */
  pollsUntilComplete: number;
  fault: KayentaFault | undefined;
  stop(): Promise<void>;
}

interface Execution {
  configId: string;
  application: string;
  request: {
    scopes: Record<string, { controlScope: { scope: string }; experimentScope: { scope: string } }>;
    thresholds: { pass: number; marginal: number };
  };
  pollsLeft: number;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Which operation a request is, by method and path. */
function route(method: string, path: string): { name: string; id?: string } | undefined {
  for (const [name, op] of Object.entries(KAYENTA_CANARY_API.operations)) {
    if (op.method !== method) continue;
    const pattern = new RegExp(`^${op.path.replace(/\{[^}]+\}/, '([^/]+)')}$`);
    const match = pattern.exec(path);
    if (match !== null) return { name, ...(match[1] !== undefined && { id: decodeURIComponent(match[1]) }) };
  }
  return undefined;
}

/** Starts the double on a free loopback port. */
export async function startKayentaDouble(): Promise<KayentaDouble> {
  const configs = new Map<string, { name: string; application: string; metrics: string[] }>();
  // Newest first: a later value for the same scope and metric wins.
  const values: Array<{ scope: string | RegExp; metric: string; value: number }> = [];
  const valueOf = (scope: string, metric: string): number | undefined =>
    values.find(
      (v) => v.metric === metric && (typeof v.scope === 'string' ? v.scope === scope : v.scope.test(scope)),
    )?.value;
  const executions = new Map<string, Execution>();
  const requests: KayentaRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  const double = {
    address: '',
    requests,
    violations,
    pollsUntilComplete: 1,
    fault: undefined as KayentaFault | undefined,
    addConfig: (config: { name: string; application: string; metrics: string[] }) => {
      const id = randomUUID();
      configs.set(id, config);
      return id;
    },
    set: (scope: string | RegExp, metric: string, value: number) =>
      void values.unshift({ scope, metric, value }),
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  /** The score of an execution: the share of the config's metrics whose experiment is within 10 % of control. */
  const judge = (execution: Execution) => {
    const metrics = configs.get(execution.configId)?.metrics ?? [];
    const pairs = Object.values(execution.request.scopes);
    const passing = metrics.filter((metric) =>
      pairs.every((pair) => {
        const control = valueOf(pair.controlScope.scope, metric);
        const experiment = valueOf(pair.experimentScope.scope, metric);
        return control !== undefined && experiment !== undefined && experiment <= control * 1.1;
      }),
    ).length;
    const score = metrics.length === 0 ? 0 : (100 * passing) / metrics.length;
    const { pass, marginal } = execution.request.thresholds;
    const classification = score >= pass ? 'Pass' : score >= marginal ? 'Marginal' : 'Fail';
    return { score, classification, classificationReason: `${passing} of ${metrics.length} metrics passed` };
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const url = new URL(req.url ?? '/', 'http://double');
    let body: unknown;
    try {
      body = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      body = text;
    }
    const found = route(req.method ?? '', url.pathname);
    requests.push({
      method: req.method ?? '',
      operation: found?.name ?? '',
      path: url.pathname,
      params: url.searchParams,
      body,
    });
    const fault = double.fault;
    if (fault === 'hang') return void hanging.add(res);
    if (fault !== undefined) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(fault.body ?? JSON.stringify({ message: `status ${fault.status}` }));
    }
    const violate = (problem: string): void => {
      violations.push(`${req.method ?? ''} ${url.pathname}: ${problem}`);
      send(res, 400, { message: problem });
    };
    if (found === undefined) return violate('Kayenta has no such route');
    const operation = KAYENTA_CANARY_API.operations[found.name] as Operation;
    for (const name of url.searchParams.keys())
      if (!operation.query.includes(name)) return violate(`${found.name} takes no query parameter ${name}`);
    if (operation.body !== undefined) {
      if (!String(req.headers['content-type']).startsWith('application/json'))
        return violate(`${found.name} consumes application/json`);
      const check = bodyCheck(operation.body);
      if (!check(body)) return violate(`${operation.body}: ${ajv.errorsText(check.errors)}`);
    }
    // Account names resolve as Kayenta's getRequiredOneBy does: a named one must exist.
    const accounts: Array<[string, readonly string[]]> = [
      ['metricsAccountName', KAYENTA_ACCOUNTS.metrics],
      ['configurationAccountName', KAYENTA_ACCOUNTS.configuration],
      ['storageAccountName', KAYENTA_ACCOUNTS.storage],
    ];
    for (const [param, known] of accounts) {
      const name = url.searchParams.get(param);
      if (name && !known.includes(name))
        return send(res, 400, { message: `Unable to resolve account ${name}.` });
    }

    if (found.name === 'listAllCanaryConfigs') {
      const application = url.searchParams.get('application');
      return send(
        res,
        200,
        [...configs.entries()]
          .filter(([, c]) => application === null || c.application === application)
          .map(([id, c]) => ({
            id,
            name: c.name,
            updatedTimestamp: 1_767_225_600_000,
            updatedTimestampIso: '2026-01-01T00:00:00Z',
            applications: [c.application],
          })),
      );
    }
    if (found.name === 'initiateCanary') {
      const configId = found.id ?? '';
      if (!configs.has(configId)) return send(res, 404, { message: `No canary config with id ${configId}.` });
      const id = randomUUID();
      executions.set(id, {
        configId,
        application: url.searchParams.get('application') ?? 'ad-hoc',
        request: body as Execution['request'],
        pollsLeft: double.pollsUntilComplete,
      });
      return send(res, 200, { canaryExecutionId: id });
    }
    const execution = executions.get(found.id ?? '');
    if (execution === undefined) return send(res, 404, { message: `No canary execution ${found.id ?? ''}.` });
    const base = {
      application: execution.application,
      pipelineId: found.id,
      canaryConfigId: execution.configId,
      stageStatus: { fetchControl: 'succeeded', fetchExperiment: 'succeeded', judge: 'running' },
    };
    if (execution.pollsLeft > 0) {
      execution.pollsLeft -= 1;
      return send(res, 200, { ...base, complete: false, status: 'running' });
    }
    send(res, 200, {
      ...base,
      stageStatus: { ...base.stageStatus, judge: 'succeeded' },
      complete: true,
      status: 'succeeded',
      result: {
        judgeResult: {
          judgeName: 'double-mean-judge',
          results: [],
          groupScores: [],
          score: judge(execution),
        },
      },
    });
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
