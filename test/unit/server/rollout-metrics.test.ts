import { describe, expect, it } from 'vitest';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { rolloutGaugeSamples, rolloutMetricPhase } from '../../../src/server/rollout-metrics.ts';

const progressing = (reason: string) => ({ conditions: [{ type: 'Progressing', status: 'True', reason }] });

describe("Argo's rollout_info phase", () => {
  it.each([
    ['NewReplicaSetAvailable', 'Completed'],
    ['RolloutPaused', 'Paused'],
    ['ProgressDeadlineExceeded', 'Timeout'],
    ['RolloutAborted', 'Abort'],
    ['ReplicaSetCreateError', 'Error'],
    ['ReplicaSetUpdated', 'Progressing'],
  ])('a Progressing condition with reason %s is %s', (reason, phase) => {
    expect(rolloutMetricPhase(progressing(reason))).toBe(phase);
  });

  it('is InvalidSpec whenever that condition is there, and Progressing with no condition', () => {
    expect(
      rolloutMetricPhase({
        conditions: [...progressing('RolloutPaused').conditions, { type: 'InvalidSpec', status: 'True' }],
      }),
    ).toBe('InvalidSpec');
    expect(rolloutMetricPhase(undefined)).toBe('Progressing');
  });
});

describe('rolloutGaugeSamples', () => {
  const rollout = (name: string, strategy: unknown, status: unknown = {}, replicas?: number) => ({
    metadata: { name, namespace: 'shop' },
    spec: { ...(replicas !== undefined && { replicas }), strategy },
    status,
  });

  it('labels the strategy and the traffic router as Argo does', () => {
    const info = (strategy: unknown) =>
      rolloutGaugeSamples([rollout('web', strategy)], [], 'in-cluster').find(
        (s) => s.name === 'rollout_info',
      )!.labels;
    expect(info({ blueGreen: { activeService: 'a' } })).toMatchObject({
      strategy: 'blueGreen',
      traffic_router: '',
    });
    expect(info({ canary: {} })).toMatchObject({ strategy: 'canary', traffic_router: '' });
    expect(info({ canary: { trafficRouting: { istio: {} } } })).toMatchObject({ traffic_router: 'Istio' });
    expect(info({ canary: { trafficRouting: { smi: {} } } })).toMatchObject({ traffic_router: 'SMI' });
    expect(info({ canary: { trafficRouting: { alb: {} } } })).toMatchObject({ traffic_router: 'ALB' });
    expect(info({ canary: { trafficRouting: { plugins: {} } } })).toMatchObject({
      traffic_router: 'Plugins',
    });
    expect(info({})).toMatchObject({ strategy: 'none' });
  });

  it('counts replicas from the status, desired from the spec (1 when unset)', () => {
    const samples = rolloutGaugeSamples(
      [rollout('web', { canary: {} }, { replicas: 5, availableReplicas: 3, updatedReplicas: 2 }, 4)],
      [],
      'in-cluster',
    );
    const value = (name: string) => samples.find((s) => s.name === name)!.value;
    expect(value('rollout_info_replicas_available')).toBe(3);
    expect(value('rollout_info_replicas_unavailable')).toBe(2);
    expect(value('rollout_info_replicas_updated')).toBe(2);
    expect(value('rollout_info_replicas_desired')).toBe(4);
    expect(
      rolloutGaugeSamples([rollout('api', { canary: {} })], [], 'in-cluster').find(
        (s) => s.name === 'rollout_info_replicas_desired',
      )!.value,
    ).toBe(1);
  });

  it('gives each AnalysisRun its phase', () => {
    const runs = [{ metadata: { name: 'web-1', namespace: 'shop' }, status: { phase: 'Failed' } }];
    expect(rolloutGaugeSamples([], runs, 'eu-west')).toEqual([
      {
        name: 'analysis_run_info',
        labels: { namespace: 'shop', name: 'web-1', phase: 'Failed', cluster: 'eu-west' },
        value: 1,
      },
    ]);
  });

  it('is what the registry serves, one series per cluster, and nothing once the source is cleared', async () => {
    const metrics = createRollgateMetrics({ processMetrics: false });
    metrics.setRolloutSource(() => [
      {
        cluster: 'in-cluster',
        rollouts: [rollout('web', { canary: {} }, progressing('RolloutPaused'), 2)],
        runs: [],
      },
      { cluster: 'eu-west', rollouts: [rollout('web', { canary: {} }, {}, 3)], runs: [] },
    ]);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'rollout_info{namespace="shop",name="web",strategy="canary",traffic_router="",phase="Paused",cluster="in-cluster"} 1',
    );
    expect(text).toContain(
      'rollout_info_replicas_desired{namespace="shop",name="web",cluster="in-cluster"} 2',
    );
    expect(text).toContain('rollout_info_replicas_desired{namespace="shop",name="web",cluster="eu-west"} 3');
    metrics.setRolloutSource(undefined);
    expect(await metrics.registry.metrics()).not.toContain('name="web"');
  });
});

describe('API client metrics', () => {
  it('count requests by verb, resource and code, and hold new resources to a bound', async () => {
    const metrics = createRollgateMetrics({ processMetrics: false });
    metrics.observeKubeRequest(
      { verb: 'create', resource: 'replicasets.apps', code: '201', seconds: 0.01 },
      'in-cluster',
    );
    metrics.observeKubeRequest(
      { verb: 'create', resource: 'replicasets.apps', code: '201', seconds: 0.02 },
      'in-cluster',
    );
    for (let i = 0; i < 500; i++)
      metrics.observeKubeRequest(
        { verb: 'patch', resource: `kind${i}.example.com`, code: '200', seconds: 0 },
        'in-cluster',
      );
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'rollgate_kube_requests_total{verb="create",resource="replicasets.apps",code="201",cluster="in-cluster"} 2',
    );
    expect(text).toContain(
      'rollgate_kube_request_duration_seconds_count{verb="create",resource="replicasets.apps",cluster="in-cluster"} 2',
    );
    expect(text).toMatch(
      /rollgate_kube_requests_total\{verb="patch",resource="other",code="200",cluster="in-cluster"\} \d+/,
    );
    expect(
      text.split('\n').filter((l) => l.startsWith('rollgate_kube_requests_total{')).length,
    ).toBeLessThanOrEqual(401);
  });
});
