// A config change as a canary, end to end: the old ConfigMap leaves Git, but is deleted only once the stable ReplicaSet that mounts it is at 0.
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { rolloutYaml, startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

/** The canary Rollout of the harness, its container reading every key of `configMap` as environment. */
const rolloutReading = (image: string, configMap: string): string =>
  rolloutYaml({ image }).replace(
    `          image: ${image}\n`,
    `          image: ${image}\n          envFrom:\n            - configMapRef: { name: ${configMap} }\n`,
  );

describe('prune of a ConfigMap a running revision still reads', () => {
  it('keeps web-config-v1 while the stable ReplicaSet has pods, names it pending, and deletes it once that ReplicaSet is at 0', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({
      'web.yaml': rolloutReading('web:1.0', 'web-config-v1'),
      'config-v1.yaml': configMapYaml('web-config-v1', { greeting: 'hello' }),
    });
    p.work.commit('web reads web-config-v1');
    await p.work.push(p.repoUrl);
    // Polled every second: the held prune is looked at again by polls that find no new commit.
    const running = await p.start({ prune: true, interval: '1s' });
    const first = await eventually('the first revision to be Healthy', async () => {
      const r = await p.rollout('web');
      return r?.status?.phase === 'Healthy' && r.status.stableRS ? r : undefined;
    });
    const stableName = `web-${first.status?.stableRS}`;

    const configMapExists = (name: string): Promise<boolean> =>
      p.clients.core.readNamespacedConfigMap({ name, namespace: 'default' }).then(
        () => true,
        () => false,
      );
    const sourceStatus = async (): Promise<SourceStatus> => {
      const cm = await p.clients.core.readNamespacedConfigMap({
        name: 'rollgate-source-apps',
        namespace: 'rollgate-system',
      });
      return JSON.parse(cm.data?.['status'] ?? '{}') as SourceStatus;
    };

    // The config change: a new name, the Rollout moved to it, the old one deleted from Git.
    p.work.write({
      'web.yaml': rolloutReading('web:2.0', 'web-config-v2'),
      'config-v2.yaml': configMapYaml('web-config-v2', { greeting: 'hi' }),
      'config-v1.yaml': null,
    });
    const commit = p.work.commit('web reads web-config-v2; web-config-v1 leaves Git');
    await p.work.push(p.repoUrl);

    const paused = await eventually('the canary to pause at its indefinite pause step', async () => {
      const r = await p.rollout('web');
      return r?.status?.phase === 'Paused' && r.status.currentPodHash !== first.status?.stableRS
        ? r
        : undefined;
    });
    expect(paused.status?.stableRS).toBe(first.status?.stableRS);
    const held = await eventually('the source to have synced the commit', async () => {
      const status = await sourceStatus();
      return status.commit === commit ? status : undefined;
    });
    expect(held.phase).toBe('Synced');
    expect(held.pendingPrune).toEqual([
      expect.objectContaining({
        key: '/ConfigMap/default/web-config-v1',
        kind: 'ConfigMap',
        namespace: 'default',
        name: 'web-config-v1',
        file: 'config-v1.yaml',
        usedBy: [stableName],
      }),
    ]);
    expect(held.pendingPrune?.[0]?.reason).toContain(`ReplicaSet default/${stableName}`);
    expect(await configMapExists('web-config-v2')).toBe(true);

    // Polls that find no new commit look at it again, and keep it while the stable ReplicaSet has pods.
    const pollsBefore = await p.polls(running);
    await eventually('two more polls', async () => (await p.polls(running)) >= pollsBefore + 2);
    const stable = (await p.replicaSets()).find((rs) => rs.name === stableName);
    expect(stable?.replicas).toBeGreaterThan(0);
    expect(await configMapExists('web-config-v1')).toBe(true);
    expect((await sourceStatus()).pendingPrune?.map((h) => h.name)).toEqual(['web-config-v1']);

    // The canary finishes: the old stable ReplicaSet scales to 0 (scaleDownDelaySeconds 0), then v1 goes.
    await promoteRollout(p.clients, { namespace: 'default', name: 'web' });
    const oldReplicasWhenGone = await eventually('web-config-v1 to be deleted', async () => {
      // Read in this order: once the ConfigMap is seen gone, the ReplicaSet read after it shows what
      // it had at least as late as the delete (a ReplicaSet scaled to 0 by a finished rollout stays there).
      if (await configMapExists('web-config-v1')) return undefined;
      const old = (await p.replicaSets()).find((rs) => rs.name === stableName);
      return { replicas: old?.replicas ?? 0 };
    });
    expect(oldReplicasWhenGone.replicas).toBe(0);
    expect((await p.rollout('web'))?.status?.phase).toBe('Healthy');
    expect(await configMapExists('web-config-v2')).toBe(true);
    const after = await eventually('the pending prune to leave the status', async () => {
      const status = await sourceStatus();
      return status.pendingPrune === undefined ? status : undefined;
    });
    expect(after).toMatchObject({ phase: 'Synced', commit });
    const state = await p.clients.core.readNamespacedConfigMap({
      name: 'rollgate-source-apps',
      namespace: 'rollgate-system',
    });
    expect(state.data?.['inventory']?.split('\n')).not.toContain('/ConfigMap/default/web-config-v1');
  });
});
