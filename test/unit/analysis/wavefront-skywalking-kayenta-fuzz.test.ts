// Seeded fuzz of the Wavefront, SkyWalking and Kayenta providers' answers: any status and body is a measurement, never a throw.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostPolicy } from '../../../src/analysis/providers/host-policy.ts';
import { createKayentaProvider } from '../../../src/analysis/providers/kayenta-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { staticProviderSecrets } from '../../../src/analysis/providers/provider-secrets.ts';
import { createSkyWalkingProvider } from '../../../src/analysis/providers/skywalking-provider.ts';
import { createWavefrontProvider } from '../../../src/analysis/providers/wavefront-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import type { AnalysisRun, Measurement, Metric } from '../../../src/manifest/analysis.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';

const SEED = 3334;
const PHASES = new Set(['Successful', 'Failed', 'Error', 'Inconclusive', 'Running']);

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  return items[Math.floor(random.next() * items.length)] as T;
}

/** A JSON value of random shape: what a broken or hostile server might answer anywhere. */
function anyValue(random: SeededRandom, depth = 0): unknown {
  const kinds = depth > 3 ? ['num', 'str', 'null', 'bool'] : ['num', 'str', 'null', 'bool', 'list', 'map'];
  switch (pick(random, kinds)) {
    case 'num':
      return pick(random, [0, -1, 1.5, 1e308, -1e-308, 42, 99.99]);
    case 'str':
      return pick(random, ['', 'x', '0.5', 'NaN', '\r\n', '__proto__', '{"a":1}']);
    case 'bool':
      return random.chance(0.5);
    case 'list':
      return Array.from({ length: Math.floor(random.next() * 4) }, () => anyValue(random, depth + 1));
    case 'map':
      return Object.fromEntries(
        Array.from({ length: Math.floor(random.next() * 4) }, () => [
          pick(random, [
            'timeseries',
            'data',
            'complete',
            'result',
            'errors',
            'score',
            'label',
            'x',
            '__proto__',
          ]),
          anyValue(random, depth + 1),
        ]),
      );
    default:
      return null;
  }
}

/** Bodies that come close to each vendor's shape, and some that do not. */
function body(random: SeededRandom): string {
  const near = [
    () => ({
      timeseries: [{ label: 'a', data: [[0, anyValue(random)], anyValue(random)] }, anyValue(random)],
    }),
    () => ({ timeseries: anyValue(random), warnings: anyValue(random), errorMessage: anyValue(random) }),
    () => ({ data: anyValue(random), errors: random.chance(0.3) ? [anyValue(random)] : undefined }),
    () => [{ id: anyValue(random), name: 'cfg' }, anyValue(random)],
    () => ({ canaryExecutionId: anyValue(random) }),
    () => ({ complete: anyValue(random), result: { judgeResult: { score: { score: anyValue(random) } } } }),
    () => ({ complete: true, status: 'terminal', exception: anyValue(random) }),
    () => anyValue(random),
  ];
  if (random.chance(0.1)) return pick(random, ['', '[', '{"a":', 'not json', '\u0000']);
  return JSON.stringify(pick(random, near)()) ?? '';
}

const aRun = (metrics: Metric[]): AnalysisRun => ({
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'AnalysisRun',
  metadata: { name: 'fuzz', namespace: 'team-a', uid: 'u' },
  spec: { metrics },
});

describe('Wavefront, SkyWalking and Kayenta under random answers', () => {
  let server: Server;
  let base = '';
  let answer = { status: 200, body: '{}' };
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('every answer is a measurement in a known phase', async () => {
    const random = new SeededRandom(SEED);
    const policy = createHostPolicy({ allowedHosts: ['127.0.0.1/32'] });
    const providers = createMetricProviderRegistry([
      createWavefrontProvider({
        policy,
        secrets: staticProviderSecrets({ 'wavefront-api-tokens': { '127.0.0.1': 't0ken' } }),
      }),
      createSkyWalkingProvider({ policy }),
      createKayentaProvider({ policy }),
    ]);
    const kayenta = {
      address: '',
      application: 'a',
      canaryConfigName: 'cfg',
      threshold: { pass: 90, marginal: 75 },
      scopes: [
        { name: 's', controlScope: { scope: 'a', step: 60 }, experimentScope: { scope: 'b', step: 60 } },
      ],
    };
    for (let i = 0; i < 200; i++) {
      answer = { status: pick(random, [200, 200, 200, 400, 429, 500, 204]), body: body(random) };
      const metric: Metric = pick(random, [
        {
          name: 'w',
          successCondition: 'result >= 0.5',
          provider: { wavefront: { address: base, query: 'ts(x)' } },
        },
        {
          name: 's',
          successCondition: 'all(result.x, {asFloat(.value) > 1})',
          provider: { skywalking: { address: base, query: '{ version }', interval: '1m' } },
        },
        { name: 'k', interval: '1m', provider: { kayenta: { ...kayenta, address: base } } },
      ]);
      let run = aRun([metric]);
      // Half the Kayenta cases resume a judgement in flight.
      if (metric.name === 'k' && random.chance(0.5)) {
        const inFlight: Measurement = {
          phase: 'Running',
          startedAt: '1970-01-01T00:00:00Z',
          resumeAt: '1970-01-01T00:00:00Z',
          metadata: { canaryExecutionId: pick(random, ['e1', '../x', '%0d%0a']) },
        };
        run = {
          ...run,
          status: {
            phase: 'Running',
            metricResults: [{ name: 'k', phase: 'Running', measurements: [inFlight] }],
          },
        };
      }
      const outcome = await reconcileAnalysisRun(run, { providers, now: new Date(60_000) });
      const last = outcome.status.metricResults?.[0]?.measurements?.at(-1);
      expect(PHASES.has(last?.phase ?? 'none'), `seed ${SEED} case ${i}: ${answer.body}`).toBe(true);
      // An Error is the provider's own (a MetricProviderError naming it), never a stray TypeError.
      if (last?.phase === 'Error' && metric.successCondition === undefined)
        expect(last.message, `seed ${SEED} case ${i}: ${answer.body}`).toMatch(/^kayenta metric "k": /);
      if (last?.phase === 'Error' && metric.name !== 'k')
        expect(last.message, `seed ${SEED} case ${i}: ${answer.body}`).toMatch(
          /^(wavefront|skywalking) metric "[ws]": |^(result|asFloat|all|cannot|the condition|condition)/i,
        );
      expect(JSON.stringify(outcome.status)).not.toContain('t0ken');
    }
  });
});
