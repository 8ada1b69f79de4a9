// Seeded fuzz of every analysis entry point a template author controls: the worker only ever yields measurements, never a throw or a crash.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../src/analysis/build-analysis-run.ts';
import { createHostPolicy } from '../../../src/analysis/providers/host-policy.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createPrometheusProvider } from '../../../src/analysis/providers/prometheus-provider.ts';
import { createWebProvider, selectJsonPath } from '../../../src/analysis/providers/web-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { secretScrubber } from '../../../src/analysis/secret-scrubber.ts';
import type { AnalysisRun, AnalysisTemplate, Metric } from '../../../src/manifest/analysis.ts';
// mulberry32, seeded, so a failing case reproduces from its seed and iteration.
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';

const SEED = 2026;
const PHASES = new Set(['Successful', 'Failed', 'Error', 'Inconclusive', 'Running']);
const HOSTILE = [
  '\r',
  '\n',
  '\r\n',
  '\0',
  '\t',
  ' ',
  ':',
  '%',
  '%zz',
  '%0d%0a',
  '{{',
  '}}',
  '"',
  '\\',
  'é',
  '☃',
  '\u{1F600}',
  '\uD800',
  '__proto__',
  'constructor',
  '@',
  '#',
  '?',
  '/',
  '[',
  ']',
  'a',
  'Z',
  '0',
  '-',
  '.',
];

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  return items[Math.floor(random.next() * items.length)] as T;
}

function hostile(random: SeededRandom, max = 12): string {
  let out = '';
  const length = Math.floor(random.next() * max);
  for (let i = 0; i < length; i++) out += pick(random, HOSTILE);
  return out;
}

function aRun(metrics: Metric[], args?: AnalysisRun['spec']['args']): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'fuzz', namespace: 'team-a', uid: 'u' },
    spec: { metrics, ...(args && { args }) },
  };
}

describe('analysis entry points under random hostile input', () => {
  let server: Server;
  let base = '';
  // What the listener answers next: set by a case before it measures.
  let answer: { status: number; body: Buffer | string; type: string } = {
    status: 200,
    body: '{}',
    type: 'application/json',
  };
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // Nothing outside loopback is dialled, whatever a fuzzed URL names.
  const policy = createHostPolicy({ allowedHosts: ['127.0.0.1/32'] });
  const providers = createMetricProviderRegistry([
    createWebProvider({ policy }),
    createPrometheusProvider({ policy }),
  ]);

  async function measure(metrics: Metric[], args?: AnalysisRun['spec']['args']): Promise<string[]> {
    const outcome = await reconcileAnalysisRun(aRun(metrics, args), {
      providers,
      now: new Date(0),
      resolveSecret: () => Promise.resolve('s3cret'),
    });
    return (outcome.status.metricResults ?? []).map((r) => r.measurements?.at(-1)?.phase ?? 'none');
  }

  it('headers: any key and value is a measurement (CR/LF, NUL, non-ASCII, prototype names)', async () => {
    const random = new SeededRandom(SEED);
    for (let i = 0; i < 150; i++) {
      const headers = Array.from({ length: 1 + Math.floor(random.next() * 3) }, () => ({
        key: random.chance(0.5) ? `x-${hostile(random, 4)}` : hostile(random),
        value: hostile(random),
      }));
      const phases = await measure([{ name: `h${i}`, provider: { web: { url: `${base}/h`, headers } } }]);
      for (const phase of phases) expect(PHASES.has(phase), `seed ${SEED} case ${i}`).toBe(true);
    }
  });

  it('URLs and methods: schemes, hosts, ports, userinfo and encodings are measurements', async () => {
    const random = new SeededRandom(SEED + 1);
    const schemes = ['http://', 'https://', 'file://', 'javascript:', 'gopher://', 'HTTP://', '', '//'];
    const hosts = [
      '127.0.0.1',
      '169.254.169.254',
      '[::ffff:a9fe:a9fe]',
      '0xa9fea9fe',
      'metadata.google.internal',
      '[fd00:ec2::254]',
      'localhost',
      '',
      '%00',
      'a b',
      '127.0.0.1:99999',
      'user:%zz@127.0.0.1',
      '☃.invalid',
    ];
    const methods = ['GET', 'PUT', 'POST', 'G\r\nET', '', 'DELETE', 'X'.repeat(40)];
    for (let i = 0; i < 150; i++) {
      const url = `${pick(random, schemes)}${pick(random, hosts)}${random.chance(0.5) ? base.slice(base.lastIndexOf(':')) : ''}/${hostile(random)}`;
      const method = pick(random, methods) as 'GET';
      const phases = await measure([
        {
          name: `u${i}`,
          provider: random.chance(0.7)
            ? { web: { url, method, ...(method !== 'GET' && { body: hostile(random) }) } }
            : { prometheus: { address: url, query: hostile(random) } },
        },
      ]);
      for (const phase of phases) expect(PHASES.has(phase), `seed ${SEED + 1} case ${i}: ${url}`).toBe(true);
    }
  });

  it('templates and args: substitution either builds a run or fails with a typed error; measuring never throws', async () => {
    const random = new SeededRandom(SEED + 2);
    const typed = new Set([
      'rollgate.analysis.missing-argument',
      'rollgate.analysis.argument-conflict',
      'rollgate.analysis.duplicate-metric',
    ]);
    for (let i = 0; i < 200; i++) {
      const names = ['a', 'b', '__proto__', 'x.y', hostile(random, 3)];
      const args = names.slice(0, 1 + Math.floor(random.next() * names.length)).map((name) =>
        random.chance(0.3)
          ? { name, valueFrom: { secretKeyRef: { name: hostile(random, 3), key: 'k' } } }
          : {
              name,
              value: random.chance(0.8)
                ? `{{args.${pick(random, names)}}}${hostile(random)}`
                : hostile(random),
            },
      );
      const text = (): string =>
        `${hostile(random, 4)}{{ args.${pick(random, names)} }}${hostile(random, 4)}`;
      const template = {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 't' },
        spec: {
          args,
          metrics: [
            {
              name: random.chance(0.9) ? 'm' : hostile(random),
              successCondition: random.chance(0.5) ? text() : 'result.ok == 1',
              provider: {
                web: {
                  url: `${base}/${text()}`,
                  headers: [{ key: 'X-A', value: text() }],
                  jsonPath: random.chance(0.3) ? text() : undefined,
                },
              },
            },
          ],
        },
      } as unknown as AnalysisTemplate;
      let run: AnalysisRun;
      try {
        run = buildAnalysisRun([template], [], { name: 'fuzz', namespace: 'team-a' });
      } catch (error) {
        expect(
          typed.has((error as { code?: string }).code ?? ''),
          `seed ${SEED + 2} case ${i}: ${String(error)}`,
        ).toBe(true);
        continue;
      }
      const outcome = await reconcileAnalysisRun(
        { ...run, metadata: { ...run.metadata, uid: 'u' } },
        {
          providers,
          now: new Date(0),
          resolveSecret: () => Promise.resolve('s3cret'),
        },
      );
      const stored = JSON.stringify(outcome.status);
      expect(stored, `seed ${SEED + 2} case ${i}`).not.toContain('s3cret');
    }
  });

  it('provider responses: any status and body, for web (with jsonPath and conditions) and Prometheus', async () => {
    const random = new SeededRandom(SEED + 3);
    const bodies = [
      () => JSON.stringify({ ok: 1, data: { result: [{ value: [0, hostile(random)] }] } }),
      () =>
        JSON.stringify({
          status: 'success',
          data: {
            resultType: pick(random, ['vector', 'scalar', 'string', 'matrix', '']),
            result: random.chance(0.5) ? [{ value: [1, '0.5'] }, { value: 'x' }] : [1, hostile(random)],
          },
        }),
      () => '['.repeat(5000) + ']'.repeat(5000),
      () => '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
      () => Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]),
      () => hostile(random, 200),
      () => JSON.stringify({ n: 1e308 * 10, s: 'x'.repeat(100_000) }),
      () => '',
    ];
    for (let i = 0; i < 150; i++) {
      answer = {
        status: pick(random, [200, 200, 204, 301, 404, 500, 999]),
        body: pick(random, bodies)(),
        type: pick(random, ['application/json', 'text/plain', '']) || 'x',
      };
      const condition = pick(random, [
        'result.ok == 1',
        'result[0] > 0.5',
        'len(result) > 2',
        hostile(random, 6),
        'result.a.a.a.a == 1',
      ]);
      const phases = await measure([
        random.chance(0.5)
          ? {
              name: `w${i}`,
              successCondition: condition,
              provider: {
                web: {
                  url: `${base}/r`,
                  ...(random.chance(0.5) && {
                    jsonPath: pick(random, [
                      '{$.ok}',
                      '$..value',
                      '$.data.result[*]',
                      hostile(random, 5),
                      '$[?(@.a)]',
                    ]),
                  }),
                },
              },
            }
          : {
              name: `p${i}`,
              successCondition: condition,
              provider: { prometheus: { address: base, query: 'up' } },
            },
      ]);
      for (const phase of phases) expect(PHASES.has(phase), `seed ${SEED + 3} case ${i}`).toBe(true);
    }
  });

  it('jsonPath: any path on any value throws only the provider error', () => {
    const random = new SeededRandom(SEED + 4);
    const pieces = [
      '$',
      '.',
      '..',
      '[',
      ']',
      '*',
      '?',
      '(',
      ')',
      '@',
      "'",
      '"',
      'a',
      '0',
      '-1',
      ':',
      ',',
      '{',
      '}',
      'length',
      '__proto__',
      'constructor',
    ];
    const values: unknown[] = [null, 1, 'x', [], {}, { a: [1, { b: 2 }] }, [[[[1]]]], Object.create(null)];
    for (let i = 0; i < 2000; i++) {
      let path = '';
      const length = Math.floor(random.next() * 10);
      for (let j = 0; j < length; j++) path += pick(random, pieces);
      try {
        selectJsonPath(pick(random, values), path);
      } catch (error) {
        expect((error as { code?: string }).code, `seed ${SEED + 4} case ${i}: ${path}`).toBe(
          'rollgate.analysis.provider',
        );
      }
    }
  });

  it('the scrubber: any secret and text, never a throw, and the secret never survives', () => {
    const random = new SeededRandom(SEED + 5);
    for (let i = 0; i < 500; i++) {
      const secret = `${hostile(random, 6)}k${i}`;
      const text = `${hostile(random)}${random.chance(0.5) ? secret.toUpperCase() : encodeURIComponent(secret.replace(/\uD800/g, ''))}${hostile(random)}`;
      const out = secretScrubber([secret, hostile(random, 3)])(text);
      expect(out.includes(secret), `seed ${SEED + 5} case ${i}`).toBe(false);
    }
  });
});
