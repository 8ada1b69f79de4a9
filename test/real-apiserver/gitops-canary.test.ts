// The whole system against a real kube-apiserver (npm run test:real-apiserver): Rollgate syncs a Rollout
// and its Services from Git and drives a canary to completion, the ReplicaSets made by the real
// controller manager and their pods made Ready by the kubelet stand-in; a Service the server refuses
// with the same 500 on every attempt becomes that object's problem while the rest syncs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../src/kube/install-crds.ts';
import { rollgateCrds } from '../../src/manifest/crds.ts';
import { eventually } from '../support/eventually.ts';
import { canaryRollout, webService } from '../support/gitops-manifests.ts';
import { openGitopsScene, type GitopsScene } from './support/gitops-scene.ts';
import { connectRealCluster } from './support/real-cluster.ts';

const source = `e2e-${process.pid}`;
let scene: GitopsScene;

beforeAll(async () => {
  const cluster = connectRealCluster();
  await installCrds(cluster.clients, rollgateCrds());
  scene = await openGitopsScene(cluster, 'rollgate-e2e');
});

afterAll(async () => {
  await scene?.stop();
});

const rolloutYaml = (image: string): string =>
  canaryRollout({ name: 'web', image, spec: { progressDeadlineSeconds: 60 } });

const rollout = () => scene.rollout('web');
const sourceStatus = () => scene.sourceStatus(source);
const readyPods = (image: string) => scene.readyPods('web', image);

describe('Rollgate against a real API server', () => {
  it('syncs a canary from Git and completes it; a Service the server refuses every time is reported, the rest syncs', async () => {
    await scene.push(
      {
        'rollout.yaml': rolloutYaml('nginx:1.27'),
        'service.yaml': webService('web'),
        // kube-apiserver 1.20 answers server-side apply of this one with a 500 on every attempt.
        'legacy.yaml': webService('legacy', { protocol: false }),
      },
      'a rollout and two services',
    );

    const { metrics, logged } = await scene.startRollgate({ source });
    const reconcileJobs = async (): Promise<number> =>
      (await metrics.jobsTotal.get()).values
        .filter((v) => v.labels.queue === 'reconcile')
        .reduce((sum, v) => sum + v.value, 0);

    await eventually(
      'the first revision healthy',
      // The probe throws what it saw, so a timeout says where the rollout stood.
      async () => {
        const live = await rollout();
        if (live?.status?.phase === 'Healthy') return true;
        throw new Error(
          `rollout ${JSON.stringify(live?.status)}; source ${JSON.stringify(await sourceStatus())}`,
        );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    expect(await readyPods('nginx:1.27')).toBe(2);
    const first = (await rollout())?.status?.stableRS;

    // The same 500 on every attempt: after a few, the Service is the source's problem, the rest synced.
    const status = await eventually(
      'the refused Service reported',
      async () => {
        const s = await sourceStatus();
        return s?.phase === 'Degraded' ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(status.problems).toHaveLength(1);
    expect(status.problems?.[0]?.file).toBe('legacy.yaml');
    expect(status.problems?.[0]?.message).toMatch(/same HTTP 500 on \d+ attempts/);
    expect(status.problems?.[0]?.message).toContain('omits key field "protocol"');
    await expect(
      scene.clients.core.readNamespacedService({ name: 'web', namespace: scene.namespace }),
    ).resolves.toBeDefined();

    await scene.push({ 'rollout.yaml': rolloutYaml('nginx:1.28') }, 'a new image');
    await eventually(
      'the canary completed at the new image',
      async () => {
        const live = await rollout();
        return (
          live?.status?.phase === 'Healthy' &&
          live.status.stableRS !== first &&
          (await readyPods('nginx:1.28')) === 2
        );
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );

    // A quiet cluster: client-node ends each idle watch after 30 s; Rollgate resumes it from its
    // resourceVersion, with no relist and no reconcile.
    let jobs = -1;
    await eventually(
      'reconciles to settle',
      async () => {
        const now = await reconcileJobs();
        const settled = now === jobs;
        jobs = now;
        return settled;
      },
      { timeoutMs: 30_000, intervalMs: 2_000 },
    );
    const from = logged().length;
    const lines = (): string[] =>
      logged()
        .slice(from)
        .split('\n')
        .filter((line) => line.includes('"component":"reconciler"') && line.includes('watch'));
    const idleResumes = (): string[] =>
      lines().filter((l) => l.includes('watch ended; resuming it') && l.includes('"reason":"idle"'));
    // Waits for the event itself (both watches ended idle and resumed, about 30 s from now) rather than
    // for a time it should have happened by; what must not have happened meanwhile is checked after.
    await eventually(
      'the idle Rollout and ReplicaSet watches resumed',
      () =>
        idleResumes().some((l) => l.includes('/rollouts')) &&
        idleResumes().some((l) => l.includes('/replicasets')),
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(lines().filter((l) => l.includes('re-enqueueing all rollouts'))).toEqual([]);
    expect(await reconcileJobs()).toBe(jobs);
  }, 300_000);
});
