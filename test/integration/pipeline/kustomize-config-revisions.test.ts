// Generated config as revisions, end to end on the staging/prod overlays: a configMapGenerator change is a canary, the old generated ConfigMap outlives the revision that read it.
import type { V1ReplicaSet } from '@kubernetes/client-node';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { eventually } from '../../support/eventually.ts';
import { overlayKustomization, webLayout, webRolloutYaml } from '../../support/kustomize-layout.ts';
import { startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const ENVS = ['staging', 'prod'] as const;
type Env = (typeof ENVS)[number];

/**
 * The layout of the issue, with the old ReplicaSet scaled down 2 s after a promotion (so the test sees
 * the hold across that delay without waiting Argo's default 30 s), and staging's own setting merged into
 * the base's generated ConfigMap.
 */
function layout(options: { greeting?: string; stagingColour?: string }): Record<string, string> {
  return {
    ...webLayout({ greeting: options.greeting ?? 'hello' }),
    'apps/web/base/rollout.yaml': webRolloutYaml().replace(
      '    canary:\n',
      '    canary:\n      scaleDownDelaySeconds: 2\n',
    ),
    'apps/web/overlays/staging/kustomization.yaml': overlayKustomization(
      'staging',
      '1.1',
      `configMapGenerator:\n  - name: web-config\n    behavior: merge\n    literals:\n      - COLOUR=${options.stagingColour ?? 'blue'}\n`,
    ),
  };
}

/** The ConfigMap a ReplicaSet's (or Rollout's) pod template reads its environment from. */
function configMapOf(template: unknown): string | undefined {
  const spec = template as
    { spec?: { containers?: Array<{ envFrom?: Array<{ configMapRef?: { name?: string } }> }> } } | undefined;
  return spec?.spec?.containers?.[0]?.envFrom?.[0]?.configMapRef?.name;
}

describe('a configMapGenerator change on kustomize overlays', () => {
  it('runs a canary on the new hash-suffixed ConfigMap, leaves the other overlay alone, and prunes the old ConfigMap only once the old revision is at 0; a base change does it in both', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    const core = p.clients.core;
    const sets = async (env: Env): Promise<V1ReplicaSet[]> =>
      (await p.clients.apps.listNamespacedReplicaSet({ namespace: 'default' })).items.filter((rs) =>
        rs.metadata?.name?.startsWith(`${env}-web-`),
      );
    const configMaps = async (env: Env): Promise<string[]> =>
      (await core.listNamespacedConfigMap({ namespace: 'default' })).items
        .map((cm) => cm.metadata?.name ?? '')
        .filter((name) => name.startsWith(`${env}-web-config-`))
        .sort();
    const exists = (name: string): Promise<boolean> =>
      core.readNamespacedConfigMap({ name, namespace: 'default' }).then(
        () => true,
        () => false,
      );
    const status = async (env: Env): Promise<SourceStatus> => {
      const cm = await core.readNamespacedConfigMap({
        name: `rollgate-source-${env}`,
        namespace: 'rollgate-system',
      });
      return JSON.parse(cm.data?.['status'] ?? '{}') as SourceStatus;
    };
    const synced = (env: Env, commit: string): Promise<SourceStatus> =>
      eventually(`${env} to sync ${commit.slice(0, 7)}`, async () => {
        const now = await status(env);
        return now.commit === commit ? now : undefined;
      });
    const healthy = (env: Env) =>
      eventually(`${env}-web to be Healthy`, async () => {
        const r = await p.rollout(`${env}-web`);
        return r?.status?.phase === 'Healthy' && r.status.stableRS ? r : undefined;
      });
    /** The canary of `env` paused on a pod template other than `stableHash`, and its new ReplicaSet. */
    const canary = async (env: Env, stableHash: string) => {
      await eventually(`${env}'s canary to pause`, async () => {
        const r = await p.rollout(`${env}-web`);
        return r?.status?.phase === 'Paused' && r.status.currentPodHash !== stableHash;
      });
      const all = await sets(env);
      const fresh = all.find(
        (rs) =>
          rs.metadata?.labels?.['rollouts-pod-template-hash'] !== stableHash && (rs.spec?.replicas ?? 0) > 0,
      );
      expect(fresh, `${env}'s canary ReplicaSet`).toBeDefined();
      return fresh as V1ReplicaSet;
    };
    /**
     * Promotes `env`'s canary and waits until `old` (a generated ConfigMap that left Git) is deleted:
     * whenever it is seen gone, the old stable ReplicaSet read after it must already be at 0.
     */
    const promoteUntilPruned = async (env: Env, old: string, stableSet: string): Promise<void> => {
      await promoteRollout(p.clients, { namespace: 'default', name: `${env}-web` });
      let sawHeldAfterHealthy = false;
      const whenPruned = await eventually(
        `${old} to be pruned`,
        async () => {
          const phase = (await p.rollout(`${env}-web`))?.status?.phase;
          const gone = !(await exists(old));
          // Read after the ConfigMap: what the ReplicaSet had at least as late as the delete.
          const stable = (await sets(env)).find((rs) => rs.metadata?.name === stableSet);
          if (gone) return { replicas: stable?.spec?.replicas ?? 0, pods: stable?.status?.replicas ?? 0 };
          if (phase === 'Healthy' && (stable?.status?.replicas ?? 0) > 0) sawHeldAfterHealthy = true;
          return undefined;
        },
        { timeoutMs: 40_000, intervalMs: 50 },
      );
      expect(whenPruned, `${stableSet} when ${old} was pruned`).toEqual({ replicas: 0, pods: 0 });
      // The canary completed while the old ReplicaSet still had pods (its 2 s scale-down delay): held then.
      expect(sawHeldAfterHealthy).toBe(true);
      expect((await p.rollout(`${env}-web`))?.status?.phase).toBe('Healthy');
      await eventually(
        `${env}'s pendingPrune to empty`,
        async () => (await status(env)).pendingPrune === undefined,
      );
    };

    p.work.write(layout({}));
    p.work.commit('the web app, base and two overlays');
    await p.work.push(p.repoUrl);
    // Polled every second: a held prune is looked at again by the polls that find no new commit.
    const running = await p.start({
      sources: ENVS.map((env) => ({ name: env, path: `apps/web/overlays/${env}` })),
      prune: true,
      interval: '1s',
    });
    const first = { staging: await healthy('staging'), prod: await healthy('prod') };
    const firstMaps = { staging: await configMaps('staging'), prod: await configMaps('prod') };
    expect(firstMaps.staging).toHaveLength(1);
    expect(firstMaps.prod).toHaveLength(1);
    const prodSetsBefore = (await sets('prod')).map((rs) => `${rs.metadata?.name}:${rs.spec?.replicas}`);

    // 1. Only staging's configMapGenerator changes.
    p.work.write(layout({ stagingColour: 'green' }));
    const generatorCommit = p.work.commit('staging: COLOUR=green');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(running);
    const stagingStable = first.staging.status?.stableRS as string;
    const stagingCanary = await canary('staging', stagingStable);
    const newMap = configMapOf(stagingCanary.spec?.template);
    expect(newMap).toMatch(/^staging-web-config-[a-z0-9]{10}$/);
    expect(newMap).not.toBe(firstMaps.staging[0]);
    const newData = await core.readNamespacedConfigMap({ name: newMap as string, namespace: 'default' });
    expect(newData.data).toEqual({ GREETING: 'hello', COLOUR: 'green' });
    // The stable ReplicaSet still reads the old one, which Git no longer holds: held, and said so.
    const oldMap = firstMaps.staging[0] as string;
    const stableSet = `staging-web-${stagingStable}`;
    const stableNow = (await sets('staging')).find((rs) => rs.metadata?.name === stableSet);
    expect(configMapOf(stableNow?.spec?.template)).toBe(oldMap);
    const held = await synced('staging', generatorCommit);
    expect(held.pendingPrune).toEqual([
      expect.objectContaining({
        kind: 'ConfigMap',
        namespace: 'default',
        name: oldMap,
        file: 'apps/web/overlays/staging/kustomization.yaml',
        usedBy: [stableSet],
      }),
    ]);
    expect(await exists(oldMap)).toBe(true);
    const pollsBefore = await p.polls(running);
    await eventually(
      'two more polls of each source',
      async () => (await p.polls(running)) >= pollsBefore + 4,
    );
    expect(await exists(oldMap)).toBe(true);
    // Prod: not rendered differently, nothing of it touched.
    await synced('prod', generatorCommit);
    expect((await sets('prod')).map((rs) => `${rs.metadata?.name}:${rs.spec?.replicas}`)).toEqual(
      prodSetsBefore,
    );
    expect(await configMaps('prod')).toEqual(firstMaps.prod);
    expect((await p.rollout('prod-web'))?.status?.phase).toBe('Healthy');
    expect((await status('prod')).pendingPrune).toBeUndefined();

    await promoteUntilPruned('staging', oldMap, stableSet);
    expect(await configMaps('staging')).toEqual([newMap]);

    // 2. A base change: both overlays render a new ConfigMap, both Rollouts run a canary on their own.
    const before = {
      staging: await healthy('staging'),
      prod: await healthy('prod'),
    };
    const mapsBefore = { staging: await configMaps('staging'), prod: await configMaps('prod') };
    p.work.write(layout({ stagingColour: 'green', greeting: 'bonjour' }));
    const baseCommit = p.work.commit('base: GREETING=bonjour');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(running);
    for (const env of ENVS) {
      const set = await canary(env, before[env].status?.stableRS as string);
      const name = configMapOf(set.spec?.template) as string;
      expect(name).toMatch(new RegExp(`^${env}-web-config-[a-z0-9]{10}$`));
      expect(name).not.toBe(mapsBefore[env][0]);
      const map = await core.readNamespacedConfigMap({ name, namespace: 'default' });
      expect(map.data?.['GREETING']).toBe('bonjour');
      const rollout = await p.rollout(`${env}-web`);
      expect(configMapOf(rollout?.spec?.template)).toBe(name);
      const status = await synced(env, baseCommit);
      expect(status.pendingPrune?.map((h) => h.name)).toEqual(mapsBefore[env]);
    }
    for (const env of ENVS)
      await promoteUntilPruned(
        env,
        mapsBefore[env][0] as string,
        `${env}-web-${before[env].status?.stableRS}`,
      );
  }, 180_000);
});
