// Issue 26, High 3 and the metadata medium: no request input stops the process, and providers do not reach metadata addresses.
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ALWAYS_DENIED_HOSTS,
  createHostPolicy,
  hostRefusal,
  hostRefusalByName,
  parseHostPattern,
} from '../../../src/analysis/providers/host-policy.ts';
import {
  checkedLookup,
  sendHttpRequest,
  type ResolveAll,
} from '../../../src/analysis/providers/http-request.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createPrometheusProvider } from '../../../src/analysis/providers/prometheus-provider.ts';
import { createWebProvider } from '../../../src/analysis/providers/web-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';

function aRun(metrics: Metric[]): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'team-a', uid: 'u' },
    spec: { metrics },
  };
}

describe('a header value with CR/LF', () => {
  afterEach(() => vi.useRealTimers());

  it('is a measurement error, and no timer is left to throw once the timeout passes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const request = sendHttpRequest({
      provider: 'web',
      url: 'http://127.0.0.1:9/',
      headers: { 'x-token': 'a\r\nInjected: 1' },
      timeoutMs: 10_000,
    });
    await expect(request).rejects.toMatchObject({
      code: 'rollgate.analysis.provider',
      message: expect.stringContaining('header "x-token"') as unknown,
    });
    // Before the fix the timer fired here and touched the request that was never created: the
    // ReferenceError was uncaught and the process exited.
    expect(() => vi.advanceTimersByTime(60_000)).not.toThrow();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('through the run executor: an Error measurement naming the header, not its value', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const metric: Metric = {
      name: 'crlf',
      provider: {
        web: { url: 'http://127.0.0.1:9/', headers: [{ key: 'X-Auth', value: 'secret\nvalue' }] },
      },
    };
    const outcome = await reconcileAnalysisRun(aRun([metric]), {
      providers: createMetricProviderRegistry([createWebProvider()]),
      now: new Date(0),
    });
    const measurement = outcome.status.metricResults?.[0]?.measurements?.[0];
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toContain('x-auth');
    expect(measurement?.message).not.toContain('secret');
    expect(() => vi.advanceTimersByTime(60_000)).not.toThrow();
  });

  it('a bad header name or method is a measurement error too', async () => {
    await expect(
      sendHttpRequest({
        provider: 'web',
        url: 'http://127.0.0.1:9/',
        headers: { 'a b': 'x' },
        timeoutMs: 1000,
      }),
    ).rejects.toMatchObject({ code: 'rollgate.analysis.provider' });
    await expect(
      sendHttpRequest({ provider: 'web', url: 'http://127.0.0.1:9/', method: 'GET /x', timeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 'rollgate.analysis.provider' });
  });
});

describe('host policy decisions', () => {
  const policy = createHostPolicy();
  const rows: Array<{ host: string; address: string; refused: boolean }> = [
    { host: '169.254.169.254', address: '169.254.169.254', refused: true },
    { host: 'imds.example', address: '169.254.169.254', refused: true },
    { host: '::ffff:169.254.169.254', address: '::ffff:169.254.169.254', refused: true },
    { host: '[fd00:ec2::254]', address: 'fd00:ec2::254', refused: true },
    { host: 'fe80::1', address: 'fe80::1', refused: true },
    { host: '100.100.100.200', address: '100.100.100.200', refused: true },
    { host: 'Metadata.Google.Internal.', address: '10.0.0.1', refused: true },
    { host: 'prometheus.monitoring', address: '10.0.0.7', refused: false },
    { host: '127.0.0.1', address: '127.0.0.1', refused: false },
  ];
  for (const row of rows) {
    it(`${row.host} → ${row.address}: ${row.refused ? 'refused' : 'allowed'}`, () => {
      expect(hostRefusal(policy, row.host, row.address) !== undefined).toBe(row.refused);
    });
  }

  it('an allow list admits its names, subdomains and blocks only; a deny entry wins', () => {
    const limited = createHostPolicy({
      allowedHosts: ['prometheus.monitoring', '*.svc.cluster.local', '10.1.0.0/16'],
      deniedHosts: ['10.1.2.0/24'],
    });
    expect(hostRefusal(limited, 'prometheus.monitoring', '10.9.9.9')).toBeUndefined();
    expect(hostRefusal(limited, 'a.b.svc.cluster.local', '10.9.9.9')).toBeUndefined();
    expect(hostRefusal(limited, 'svc.cluster.local.evil', '10.9.9.9')).toContain('allowedHosts');
    expect(hostRefusal(limited, 'x', '10.1.9.9')).toBeUndefined();
    expect(hostRefusal(limited, 'x', '10.1.2.3')).toContain('deniedHosts');
    // A name allowed by name still may not resolve to a metadata address.
    expect(hostRefusal(limited, 'prometheus.monitoring', '169.254.169.254')).toBeDefined();
  });

  it('a names-only allow list refuses other names before any DNS query', () => {
    const names = createHostPolicy({ allowedHosts: ['prometheus.monitoring'] });
    expect(hostRefusalByName(names, 'leak.attacker.example')).toContain('allowedHosts');
    expect(hostRefusalByName(names, 'prometheus.monitoring')).toBeUndefined();
    expect(hostRefusalByName(createHostPolicy(), 'metadata.google.internal')).toBeDefined();
  });

  it('parses every built-in entry and explains a bad one', () => {
    for (const entry of ALWAYS_DENIED_HOSTS) expect(typeof parseHostPattern(entry)).toBe('object');
    expect(parseHostPattern('10.0.0.0/33')).toContain('prefix length');
    expect(parseHostPattern('host/8')).toContain('CIDR');
    expect(parseHostPattern('bad host')).toContain('not a host name');
  });
});

describe('the connect-time lookup (DNS rebinding)', () => {
  type Answer = Array<{ address: string; family: number }>;
  /** A DNS server whose answers change from one query to the next. */
  const rebinding = (answers: Answer[]): ResolveAll => {
    let query = 0;
    return (_host, _options, callback) => callback(null, answers[Math.min(query++, answers.length - 1)]!);
  };
  const lookupOnce = (
    lookup: ReturnType<typeof checkedLookup>,
    all: boolean,
  ): Promise<{ error: Error | null; address: unknown }> =>
    new Promise((resolve) => {
      lookup('rebind.example', { all }, ((error: Error | null, address: unknown) =>
        resolve({ error, address })) as never);
    });

  it('hands the socket the address it checked, and refuses the answer that turned into a metadata address', async () => {
    const lookup = checkedLookup(
      createHostPolicy(),
      rebinding([[{ address: '10.0.0.5', family: 4 }], [{ address: '169.254.169.254', family: 4 }]]),
    );
    expect(await lookupOnce(lookup, false)).toEqual({ error: null, address: '10.0.0.5' });
    const second = await lookupOnce(lookup, false);
    expect(second.error?.message).toContain('169.254.169.254');
  });

  it('refuses an answer if any of its addresses is refused (the socket may try each)', async () => {
    const lookup = checkedLookup(
      createHostPolicy(),
      rebinding([
        [
          { address: '10.0.0.5', family: 4 },
          { address: 'fd00:ec2::254', family: 6 },
        ],
      ]),
    );
    const answer = await lookupOnce(lookup, true);
    expect(answer.error?.message).toContain('fd00:ec2::254');
    expect(answer.address).toBe('');
  });
});

describe('web and Prometheus providers against a metadata-like listener', () => {
  let server: Server;
  let port = 0;
  const hits: string[] = [];
  beforeAll(async () => {
    // Stands for 169.254.169.254: the IMDSv2 flow is a PUT for a token, then a GET with it.
    server = createServer((req, res) => {
      hits.push(`${req.method ?? ''} ${req.url ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"AccessKeyId":"AKIA","Token":"t"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // Loopback plays the metadata address: denied by configuration, as 169.254.0.0/16 is by default.
  const denyLoopback = createHostPolicy({ deniedHosts: ['127.0.0.0/8', '::1'] });

  it('refuses an IP literal before connecting, for web (PUT + headers) and Prometheus', async () => {
    const metrics: Metric[] = [
      {
        name: 'imds-token',
        provider: {
          web: {
            url: `http://127.0.0.1:${port}/latest/api/token`,
            method: 'PUT',
            headers: [{ key: 'X-aws-ec2-metadata-token-ttl-seconds', value: '21600' }],
          },
        },
      },
      { name: 'prom', provider: { prometheus: { address: `http://127.0.0.1:${port}`, query: 'up' } } },
    ];
    const outcome = await reconcileAnalysisRun(aRun(metrics), {
      providers: createMetricProviderRegistry([
        createWebProvider({ policy: denyLoopback }),
        createPrometheusProvider({ policy: denyLoopback }),
      ]),
      now: new Date(0),
    });
    expect(hits).toEqual([]);
    for (const result of outcome.status.metricResults ?? []) {
      expect(result.measurements?.[0]?.phase).toBe('Error');
      expect(result.measurements?.[0]?.message).toContain('refused');
    }
  });

  it('checks a name on the address it resolved to, at connect time', async () => {
    await expect(
      sendHttpRequest({
        provider: 'web',
        url: `http://localhost:${port}/latest/meta-data/iam/security-credentials/`,
        timeoutMs: 5_000,
        policy: denyLoopback,
      }),
    ).rejects.toMatchObject({ message: expect.stringContaining('refused') as unknown });
    expect(hits).toEqual([]);
  });

  it('applies the same check to https, with and without the TLS skip (its own agent)', async () => {
    for (const insecure of [false, true]) {
      await expect(
        sendHttpRequest({
          provider: 'web',
          url: `https://localhost:${port}/`,
          timeoutMs: 5_000,
          insecure,
          policy: denyLoopback,
        }),
      ).rejects.toMatchObject({ message: expect.stringMatching(/ refused: .*deniedHosts/) as unknown });
    }
    expect(hits).toEqual([]);
  });

  it('with the default policy the same listener answers (loopback is not denied by default)', async () => {
    const response = await sendHttpRequest({
      provider: 'web',
      url: `http://localhost:${port}/ok`,
      timeoutMs: 5_000,
    });
    expect(response.status).toBe(200);
    expect(hits).toEqual(['GET /ok']);
  });
});
