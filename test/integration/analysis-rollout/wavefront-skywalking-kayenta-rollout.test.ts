// Canary analysis end to end on Wavefront, SkyWalking and Kayenta (sandbox + API doubles): promoted on good points, aborted on bad ones.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createClusterMetricProviders } from '../../../src/reconciler/analysis-run-reconciler.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { startKayentaDouble, type KayentaDouble } from '../../support/kayenta-double.ts';
import { startSkyWalkingDouble, type SkyWalkingDouble } from '../../support/skywalking-double.ts';
import { startWavefrontDouble, type WavefrontDouble } from '../../support/wavefront-double.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import { ReconcileHarness, analysisRunsOf, createAnalysisTemplate, driveUntil } from './analysis-harness.ts';

/** Where the reconciler reads provider Secrets (kubernetes.stateNamespace). */
const OWN_NAMESPACE = 'rollgate-system';
const SUCCESS_RATE = (service: string) =>
  `sum(rate(5m, ts("istio.requestcount.count", response_code!=500 and destination_service="${service}"))) / sum(rate(5m, ts("istio.requestcount.count", reporter=client and destination_service="${service}")))`;

let harness: ReconcileHarness;
let wf: WavefrontDouble;
let sw: SkyWalkingDouble;
let kayenta: KayentaDouble;
let providers: MetricProviderRegistry;

beforeAll(async () => {
  [harness, wf, sw, kayenta] = await Promise.all([
    ReconcileHarness.start({ seed: 34 }),
    startWavefrontDouble(),
    startSkyWalkingDouble(),
    startKayentaDouble(),
  ]);
  await harness.clients.core.createNamespace({ body: { metadata: { name: OWN_NAMESPACE } } });
  // The tokens Secret as Argo's docs show it, keyed by address, in Rollgate's namespace.
  await harness.clients.core.createNamespacedSecret({
    namespace: OWN_NAMESPACE,
    body: {
      metadata: { name: 'wavefront-api-tokens' },
      data: { [wf.tokenKey]: Buffer.from(wf.token).toString('base64') },
    },
  });
  providers = createClusterMetricProviders(
    harness.clients,
    { allowedHosts: [], deniedHosts: [], jobServiceAccounts: [] },
    OWN_NAMESPACE,
  );
  kayenta.addConfig({ name: 'my-test', application: 'guestbook', metrics: ['latency', 'errors'] });
  // Argo's documented templates, pointed at the doubles.
  await createAnalysisTemplate(harness, 'wavefront-success-rate', {
    args: [{ name: 'service-name' }],
    metrics: [
      {
        name: 'success-rate',
        interval: '5s',
        count: 2,
        successCondition: 'result >= 0.95',
        failureLimit: 0,
        provider: { wavefront: { address: wf.address, query: SUCCESS_RATE('{{args.service-name}}') } },
      },
    ],
  });
  await createAnalysisTemplate(harness, 'skywalking-apdex', {
    args: [{ name: 'service-name' }],
    metrics: [
      {
        name: 'apdex',
        interval: '5s',
        count: 2,
        successCondition: 'all(result.service_apdex.values.values, {asFloat(.value) >= 9900})',
        failureLimit: 0,
        provider: {
          skywalking: {
            interval: '3m',
            address: sw.address,
            query: `query queryData($duration: Duration!) {
  service_apdex: readMetricsValues(
    condition: { name: "service_apdex", entity: { scope: Service, serviceName: "{{ args.service-name }}", normal: true } },
    duration: $duration) {
      label values { values { value } }
    }
}`,
          },
        },
      },
    ],
  });
  await createAnalysisTemplate(harness, 'mann-whitney', {
    args: [{ name: 'service-name' }, { name: 'stable-hash' }, { name: 'canary-hash' }],
    metrics: [
      {
        name: 'mann-whitney',
        interval: '1m',
        count: 1,
        provider: {
          kayenta: {
            address: kayenta.address,
            application: 'guestbook',
            canaryConfigName: 'my-test',
            threshold: { pass: 90, marginal: 75 },
            scopes: [
              {
                name: 'default',
                controlScope: {
                  scope: 'app={{args.service-name}} and rollouts-pod-template-hash={{args.stable-hash}}',
                  step: 60,
                },
                experimentScope: {
                  scope: 'app={{args.service-name}} and rollouts-pod-template-hash={{args.canary-hash}}',
                  step: 60,
                },
              },
            ],
          },
        },
      },
    ],
  });
}, 60_000);
afterAll(async () => {
  await Promise.all([harness?.stop(), wf?.stop(), sw?.stop(), kayenta?.stop()]);
});
afterEach(() => {
  expect(wf.violations).toEqual([]);
  expect(sw.violations).toEqual([]);
  expect(kayenta.violations).toEqual([]);
  expect(harness.violations).toEqual([]);
});

const aborted = (o: ObservedState): boolean =>
  o.rollout.status?.phase === 'Degraded' && o.rollout.status?.canary?.weights?.canary.weight === 0;

/** A rollout promoted at app:1.0 whose canary steps run `template` for the app, then given app:2.0. */
async function canaryWithAnalysis(name: string, template: string): Promise<RolloutKey> {
  const object = testRollout({ name, replicas: 4, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = {
    ...spec.strategy.canary,
    steps: [
      { setWeight: 25 },
      {
        analysis: {
          templates: [{ templateName: template }],
          args: [
            { name: 'service-name', value: name },
            ...(template === 'mann-whitney'
              ? [
                  { name: 'stable-hash', valueFrom: { podTemplateHashValue: 'Stable' } },
                  { name: 'canary-hash', valueFrom: { podTemplateHashValue: 'Latest' } },
                ]
              : []),
          ],
        },
      },
      { setWeight: 50 },
    ],
  };
  const key = await harness.createRollout(object);
  await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000, providers });
  await harness.patchSpec(key, {
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
    },
  });
  return key;
}

/** Drives the canary to its end: promoted (the new revision stable) or aborted (the old one kept). */
async function outcome(key: RolloutKey, want: 'promoted' | 'aborted') {
  const stable = (await harness.observe(key)).rollout.status?.stableRS;
  await driveUntil(harness, key, want === 'promoted' ? isFullyPromoted : aborted, {
    timeoutMs: 180_000,
    providers,
  });
  const after = (await harness.observe(key)).rollout.status?.stableRS;
  if (want === 'promoted') expect(after).not.toBe(stable);
  else expect(after).toBe(stable);
  const [run] = await analysisRunsOf(harness, key);
  return { run, stable };
}

describe('Wavefront', () => {
  it('promotes a canary whose success rate is high', async () => {
    wf.set(SUCCESS_RATE('wf-good'), 0.991);
    const key = await canaryWithAnalysis('wf-good', 'wavefront-success-rate');
    const { run } = await outcome(key, 'promoted');
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.map((m) => m.value)).toEqual(['0.99', '0.99']);
  });

  it('aborts a canary whose success rate is low: Degraded, weight 0, stable kept', async () => {
    wf.set(SUCCESS_RATE('wf-bad'), 0.62);
    const key = await canaryWithAnalysis('wf-bad', 'wavefront-success-rate');
    const { run } = await outcome(key, 'aborted');
    expect(run?.status?.phase).toBe('Failed');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('0.62');
  });
});

describe('SkyWalking', () => {
  it('promotes a canary whose apdex is high', async () => {
    sw.set('service_apdex', 'sw-good', 9960);
    const key = await canaryWithAnalysis('sw-good', 'skywalking-apdex');
    const { run } = await outcome(key, 'promoted');
    expect(run?.status?.phase).toBe('Successful');
  });

  it('aborts a canary whose apdex is low', async () => {
    sw.set('service_apdex', 'sw-bad', 8000);
    const key = await canaryWithAnalysis('sw-bad', 'skywalking-apdex');
    const { run } = await outcome(key, 'aborted');
    expect(run?.status?.phase).toBe('Failed');
  });
});

describe('Kayenta', () => {
  it('promotes a canary Kayenta scores 100 against the stable pods (scopes carry both pod-template hashes)', async () => {
    kayenta.set(/^app=kay-good /, 'latency', 120);
    kayenta.set(/^app=kay-good /, 'errors', 1);
    const before = kayenta.requests.length;
    const key = await canaryWithAnalysis('kay-good', 'mann-whitney');
    const { run, stable } = await outcome(key, 'promoted');
    expect(run?.status?.phase).toBe('Successful');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('100');
    const started = kayenta.requests.slice(before).find((r) => r.operation === 'initiateCanary');
    const scopes = (started?.body as { scopes: Record<string, Record<string, { scope: string }>> }).scopes;
    const canaryHash = (await harness.observe(key)).rollout.status?.stableRS;
    expect(scopes['default']?.['controlScope']?.scope).toBe(
      `app=kay-good and rollouts-pod-template-hash=${stable}`,
    );
    expect(scopes['default']?.['experimentScope']?.scope).toBe(
      `app=kay-good and rollouts-pod-template-hash=${canaryHash}`,
    );
  });

  it('aborts a canary whose latency is twice the stable’s (score 50, under marginal)', async () => {
    kayenta.set(/^app=kay-bad /, 'latency', 120);
    kayenta.set(/^app=kay-bad /, 'errors', 1);
    const key = await canaryWithAnalysis('kay-bad', 'mann-whitney');
    // The canary's pods, once they exist, are slower: any hash but the stable one.
    const stable = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    kayenta.set(new RegExp(`^app=kay-bad and rollouts-pod-template-hash=(?!${stable}$)`), 'latency', 240);
    const { run } = await outcome(key, 'aborted');
    expect(run?.status?.phase).toBe('Failed');
    expect(run?.status?.metricResults?.[0]?.measurements?.at(-1)?.value).toBe('50');
  });
});
