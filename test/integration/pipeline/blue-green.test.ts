// Blue-green through a whole Rollgate: examples/rollout-bluegreen.yaml in Git, a new image pushed, preview, promote, switch.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { eventually } from '../../support/eventually.ts';
import { startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const HASH = 'rollouts-pod-template-hash';
const EXAMPLE = readFileSync(
  fileURLToPath(new URL('../../../examples/rollout-bluegreen.yaml', import.meta.url)),
  'utf8',
);

/** The example as committed, with its image; the scale-down delay shortened to 1 s (this test runs in real time). */
function example(image: string): string {
  return EXAMPLE.replace('ghcr.io/rollgate/web:1.0.0', image).replace(
    'scaleDownDelaySeconds: 30',
    'scaleDownDelaySeconds: 1',
  );
}

describe('blue-green from Git', () => {
  it('previews a pushed image behind the preview Service, switches the active one on promote, scales the old one down', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    const selector = async (name: string): Promise<string | undefined> =>
      (await p.clients.core.readNamespacedService({ name, namespace: 'default' })).spec?.selector?.[HASH];

    p.work.write({ 'apps/bluegreen.yaml': example('web:1.0') });
    p.work.commit('blue-green demo');
    await p.work.push(p.repoUrl);
    const running = await p.start();
    const first = await eventually('the first revision to be healthy', async () => {
      const r = await p.rollout('bluegreen-demo');
      return r?.status?.phase === 'Healthy' ? r.status.stableRS : undefined;
    });
    await eventually(
      'the active Service on it',
      async () => (await selector('bluegreen-demo-active')) === first,
    );

    p.work.write({ 'apps/bluegreen.yaml': example('web:2.0') });
    p.work.commit('new image');
    await p.work.push(p.repoUrl);
    expect((await p.pushWebhook(running)).status).toBe(202);

    const paused = await eventually('the preview to pause for promotion', async () => {
      const r = await p.rollout('bluegreen-demo');
      return r?.status?.phase === 'Paused' ? r : undefined;
    });
    const next = paused.status?.currentPodHash ?? '';
    expect(next).not.toBe(first);
    expect(await selector('bluegreen-demo-preview')).toBe(next);
    expect(await selector('bluegreen-demo-active')).toBe(first);
    const preview = (await p.replicaSets()).find((rs) => rs.hash === next);
    expect(preview).toMatchObject({ image: 'web:2.0', replicas: 1 });

    await p.clients.custom.patchNamespacedCustomObjectStatus(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'bluegreen-demo',
        body: { status: { pauseConditions: null } },
      },
      MERGE_PATCH,
    );
    await eventually('the switch and completion', async () => {
      const r = await p.rollout('bluegreen-demo');
      return r?.status?.phase === 'Healthy' && r.status.stableRS === next ? r : undefined;
    });
    expect(await selector('bluegreen-demo-active')).toBe(next);
    await eventually('the old ReplicaSet scaled down after its delay', async () => {
      const old = (await p.replicaSets()).find((rs) => rs.hash === first);
      return old?.replicas === 0;
    });
    expect((await p.replicaSets()).find((rs) => rs.hash === next)?.replicas).toBe(3);
  });
});
