// The web provider against local HTTP and HTTPS servers: methods, headers from secrets, jsonPath, timeout, TLS skip.
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../src/analysis/build-analysis-run.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createWebProvider } from '../../../src/analysis/providers/web-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric, WebMetric } from '../../../src/manifest/analysis.ts';
import { startTlsTestServer, type TlsTestServer } from '../../support/tls-test-server.ts';

const provider = createWebProvider();
const registry = createMetricProviderRegistry([provider]);
const now = new Date(Date.UTC(2026, 0, 1));
const ctx = { now, logger: silentLogger };

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function handler(seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const json = (status: number, value: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      };
      switch (req.url) {
        case '/health':
          return json(200, {
            status: 'healthy',
            data: { ok: true, rate: 0.99, items: [{ v: 1 }, { v: 2 }] },
          });
        case '/message':
          return json(200, { message: 'It worked!' });
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ready');
          return;
        case '/fail':
          return json(503, { error: 'down' });
        case '/slow':
          setTimeout(() => json(200, {}), 5000);
          return;
        case '/big':
          res.writeHead(200).end('x'.repeat(11 * 1024 * 1024));
          return;
        case '/echo':
          return json(200, { method: req.method, body, auth: req.headers.authorization ?? null });
        default:
          return json(404, {});
      }
    });
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  return typeof a === 'object' && a !== null ? a.port : 0;
}

const webMetric = (web: WebMetric, fields: Partial<Metric> = {}): Metric => ({
  name: 'web',
  provider: { web },
  ...fields,
});
const aRun = (metric: Metric, spec: Partial<AnalysisRun['spec']> = {}): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'r', namespace: 'shop', uid: 'u' },
  spec: { metrics: [metric], ...spec },
});

describe('web provider', () => {
  const seen: Seen[] = [];
  let http: Server;
  let https: TlsTestServer;
  let base: string;

  beforeAll(async () => {
    http = createHttpServer(handler(seen));
    base = `http://127.0.0.1:${await listen(http)}`;
    https = await startTlsTestServer(handler(seen));
  });

  afterAll(async () => {
    http?.closeAllConnections();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    await https?.close();
  });

  it('GETs JSON and selects with a Kubernetes-style jsonPath', async () => {
    const answer = await provider.measure(
      webMetric({ url: `${base}/health`, jsonPath: '{$.data.rate}' }),
      aRun(webMetric({ url: '' })),
      ctx,
    );
    expect(answer.value).toBe(0.99);
    expect(answer.raw).toBe('0.99');
    const list = await provider.measure(
      webMetric({ url: `${base}/health`, jsonPath: '$.data.items[*].v' }),
      aRun(webMetric({ url: '' })),
      ctx,
    );
    expect(list.value).toEqual([1, 2]);
    const whole = await provider.measure(
      webMetric({ url: `${base}/health` }),
      aRun(webMetric({ url: '' })),
      ctx,
    );
    expect(whole.value).toMatchObject({ status: 'healthy' });
  });

  it('uses a plain-text body as a string when there is no jsonPath', async () => {
    const outcome = await reconcileAnalysisRun(
      aRun(webMetric({ url: `${base}/text` }, { successCondition: 'result == "ready"' })),
      {
        providers: registry,
        now,
      },
    );
    expect(outcome.status.phase).toBe('Successful');
  });

  it('runs Argo’s rollout-secret example: URL from a Secret, never stored', async () => {
    const run = buildAnalysisRun(
      [
        {
          kind: 'AnalysisTemplate',
          metadata: { name: 'analysis-secret' },
          spec: {
            args: [
              {
                name: 'secret-url',
                valueFrom: { secretKeyRef: { name: 'example-secret', key: 'secretUrl' } },
              },
            ],
            metrics: [
              {
                name: 'webmetric',
                successCondition: "result == 'It worked!'",
                provider: { web: { url: '{{args.secret-url}}', jsonPath: '{$.message}' } },
              },
            ],
          },
        },
      ],
      [],
      { name: 'r', namespace: 'shop' },
    );
    const outcome = await reconcileAnalysisRun(run, {
      providers: registry,
      now,
      resolveSecret: (namespace, name, key) =>
        Promise.resolve(
          namespace === 'shop' && name === 'example-secret' && key === 'secretUrl'
            ? `${base}/message`
            : 'wrong',
        ),
    });
    expect(outcome.status.phase).toBe('Successful');
    expect(JSON.stringify(outcome.status)).not.toContain(base);
  });

  it('POSTs a jsonBody with headers whose values come from secrets', async () => {
    seen.length = 0;
    const run = aRun(
      webMetric(
        {
          url: `${base}/echo`,
          method: 'POST',
          jsonBody: { canary: 'v2' },
          headers: [{ key: 'Authorization', value: 'Bearer {{args.token}}' }],
          jsonPath: '$.method',
        },
        { successCondition: 'result == "POST"' },
      ),
      { args: [{ name: 'token', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } }] },
    );
    const outcome = await reconcileAnalysisRun(run, {
      providers: registry,
      now,
      resolveSecret: () => Promise.resolve('tok-123'),
    });
    expect(outcome.status.phase).toBe('Successful');
    expect(seen[0]).toMatchObject({ method: 'POST', body: '{"canary":"v2"}' });
    expect(seen[0]?.headers.authorization).toBe('Bearer tok-123');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.stringify(outcome.status)).not.toContain('tok-123');
  });

  it('a non-2xx status is an Error measurement', async () => {
    const outcome = await reconcileAnalysisRun(
      aRun(webMetric({ url: `${base}/fail` }, { consecutiveErrorLimit: 0 })),
      { providers: registry, now },
    );
    expect(outcome.status.phase).toBe('Error');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toMatch(
      /received non 2xx response code: 503/,
    );
  });

  it('times out after timeoutSeconds', async () => {
    const started = performance.now();
    await expect(
      provider.measure(
        webMetric({ url: `${base}/slow`, timeoutSeconds: 1 }),
        aRun(webMetric({ url: '' })),
        ctx,
      ),
    ).rejects.toThrow(/timed out after 1000 ms/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('refuses responses over 10 MiB', async () => {
    await expect(
      provider.measure(webMetric({ url: `${base}/big` }), aRun(webMetric({ url: '' })), ctx),
    ).rejects.toThrow(/larger than/);
  });

  it('a jsonPath that matches nothing, or uses a script filter, is an error', async () => {
    await expect(
      provider.measure(
        webMetric({ url: `${base}/health`, jsonPath: '$.nope' }),
        aRun(webMetric({ url: '' })),
        ctx,
      ),
    ).rejects.toThrow(/matched nothing/);
    await expect(
      provider.measure(
        webMetric({ url: `${base}/health`, jsonPath: '$.data.items[?(@.v > 1)]' }),
        aRun(webMetric({ url: '' })),
        ctx,
      ),
    ).rejects.toThrow(/jsonPath/);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/x', 'gopher://x', 'javascript:alert(1)', 'not a url'])(
    'refuses %s',
    async (url) => {
      await expect(provider.measure(webMetric({ url }), aRun(webMetric({ url: '' })), ctx)).rejects.toThrow(
        /not allowed|invalid URL/,
      );
    },
  );

  it('verifies TLS by default and skips verification only with insecure: true', async () => {
    await expect(
      provider.measure(
        webMetric({ url: `${https.url}/health`, jsonPath: '$.status' }),
        aRun(webMetric({ url: '' })),
        ctx,
      ),
    ).rejects.toThrow(/self-signed certificate|certificate/);
    const answer = await provider.measure(
      webMetric({ url: `${https.url}/health`, jsonPath: '$.status', insecure: true }),
      aRun(webMetric({ url: '' })),
      ctx,
    );
    expect(answer.value).toBe('healthy');
    // The skip is per request: the next secure request verifies again.
    await expect(
      provider.measure(webMetric({ url: `${https.url}/health` }), aRun(webMetric({ url: '' })), ctx),
    ).rejects.toThrow(/certificate/);
  });
});
