// What an operator's Prometheus scrapes from one Rollgate process over HTTP while a canary runs in the
// sandbox: Argo Rollouts' per-rollout gauges (rollout_info and the replica gauges), the API client metrics
// by verb, resource and code, and the sync counter.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SceneRollgate, type SystemScene } from '../../support/system-scene.ts';
import { rolloutYaml } from '../pipeline/pipeline-harness.ts';

let scene: SystemScene;
let rollgate: SceneRollgate;

const scrape = async (): Promise<string> => (await fetch(`${rollgate.running.http.url}/metrics`)).text();

async function phase(name: string): Promise<string | undefined> {
  const found = await scene.clients.custom.getNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: 'default',
    plural: 'rollouts',
    name,
  });
  return toPlainObject<{ status?: { phase?: string } }>(found).status?.phase;
}

beforeAll(async () => {
  scene = await startSystemScene({
    name: 'rollout-metrics',
    redisUrl: inject('redisUrl'),
    repositories: ['apps'],
    deleteRedisKeys: true,
  });
  const work = scene.workingCopy();
  work.write({
    'web.yaml': rolloutYaml({ image: 'web:1.0', replicas: 4 }),
    'api.yaml': rolloutYaml({ name: 'api', image: 'api:1.0', replicas: 2 }),
  });
  work.commit('first');
  await work.push(scene.repoUrl('apps'));
  rollgate = await scene.startRollgate({
    processMetrics: false,
    config: {
      sources: [{ name: 'apps', url: scene.repoUrl('apps'), branch: 'main', path: '.', interval: '1s' }],
    },
  });
  await eventually('both rollouts Healthy', async () =>
    (await phase('web').catch(() => undefined)) === 'Healthy' &&
    (await phase('api').catch(() => undefined)) === 'Healthy'
      ? true
      : undefined,
  );
  // A second revision of web stops at its canary's pause.
  work.write({ 'web.yaml': rolloutYaml({ image: 'web:2.0', replicas: 4 }) });
  work.commit('web 2.0');
  await work.push(scene.repoUrl('apps'));
  await eventually('web to pause at its canary step', async () =>
    (await phase('web')) === 'Paused' ? true : undefined,
  );
}, 120_000);

afterAll(async () => {
  await scene?.stop();
});

describe('/metrics of a running Rollgate', () => {
  it("serves Argo Rollouts' rollout_info and replica gauges for each rollout, as Argo names them", async () => {
    const text = await eventually('the gauges to show the paused canary', async () => {
      const t = await scrape();
      return t.includes(
        'rollout_info_replicas_updated{namespace="default",name="web",cluster="in-cluster"} 2',
      )
        ? t
        : undefined;
    });
    expect(text).toContain('# TYPE rollout_info gauge');
    expect(text).toContain(
      'rollout_info{namespace="default",name="web",strategy="canary",traffic_router="",phase="Paused",cluster="in-cluster"} 1',
    );
    expect(text).toContain(
      'rollout_info{namespace="default",name="api",strategy="canary",traffic_router="",phase="Completed",cluster="in-cluster"} 1',
    );
    expect(text).toContain(
      'rollout_info_replicas_desired{namespace="default",name="web",cluster="in-cluster"} 4',
    );
    expect(text).toContain(
      'rollout_info_replicas_desired{namespace="default",name="api",cluster="in-cluster"} 2',
    );
    expect(text).toContain(
      'rollout_info_replicas_available{namespace="default",name="api",cluster="in-cluster"} 2',
    );
    expect(text).toContain(
      'rollout_info_replicas_unavailable{namespace="default",name="api",cluster="in-cluster"} 0',
    );
  });

  it('counts its API requests by verb, resource and status code, with their durations', async () => {
    const text = await scrape();
    // One ReplicaSet per revision of each rollout was created: web twice, api once.
    expect(text).toMatch(
      /rollgate_kube_requests_total\{verb="create",resource="replicasets\.apps",code="201",cluster="in-cluster"\} 3\n/,
    );
    expect(text).toMatch(
      /rollgate_kube_requests_total\{verb="update",resource="rollouts\.rollgate\.dev\/status",code="200",cluster="in-cluster"\} \d+/,
    );
    expect(text).toMatch(
      /rollgate_kube_request_duration_seconds_count\{verb="create",resource="replicasets\.apps",cluster="in-cluster"\} 3\n/,
    );
  });

  it('counts the syncs of each source by result', async () => {
    const text = await scrape();
    expect(text).toContain('rollgate_syncs_total{source="apps",result="synced"} 2');
  });

  it('counts its reconcile jobs and their passes: at least one pass a job, a few for a canary step', async () => {
    const text = await scrape();
    const sum = (name: string): number =>
      [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'gm'))].reduce(
        (total, match) => total + Number(match[1]),
        0,
      );
    const jobs = sum('rollgate_reconcile_duration_seconds_count');
    const passes = sum('rollgate_reconcile_passes_total');
    expect(jobs).toBeGreaterThan(0);
    // Each job reads and plans at least once; the canaries above took several passes to their steps.
    expect(passes).toBeGreaterThan(jobs);
  });

  it('drops a deleted rollout from the gauges', async () => {
    await scene.clients.custom.deleteNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      name: 'api',
    });
    const text = await eventually('api to leave the gauges', async () => {
      const t = await scrape();
      return t.includes('name="api"') ? undefined : t;
    });
    expect(text).toContain('rollout_info{namespace="default",name="web"');
  });
});
