// Kustomize overlays end to end: real git http-backend, real kubectl kustomize, Redis, the sandbox cluster.
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import { eventually } from '../../support/eventually.ts';
import { overlayKustomization, webLayout } from '../../support/kustomize-layout.ts';
import { startPipeline, type LiveRollout, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const imageOf = (rollout: LiveRollout | undefined): string | undefined =>
  rollout?.spec?.template?.spec?.containers?.[0]?.image;

const SOURCES = [
  { name: 'staging', path: 'apps/web/overlays/staging' },
  { name: 'prod', path: 'apps/web/overlays/prod' },
];

/** kustomize runs of a source so far (rollgate_renders_total{result="rendered"}). */
async function rendersOf(p: Pipeline, process: RunningProcess, source: string): Promise<number> {
  const values = (await p.metrics(process)?.rendersTotal.get())?.values ?? [];
  return values
    .filter((v) => v.labels.source === source && v.labels.result === 'rendered')
    .reduce((sum, v) => sum + v.value, 0);
}

async function configMapNames(p: Pipeline): Promise<string[]> {
  const list = await p.clients.core.listNamespacedConfigMap({ namespace: 'default' });
  return list.items.map((cm) => cm.metadata?.name ?? '').filter((name) => name.includes('web-config'));
}

describe('sources on kustomize overlays', () => {
  it("creates the prefixed objects; a push to staging's images runs staging's canary and leaves prod alone; a base change updates both", async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write(webLayout());
    p.work.commit('the web app, base and two overlays');
    await p.work.push(p.repoUrl);
    const running = await p.start({ sources: SOURCES, prune: true });

    for (const env of ['staging', 'prod']) {
      const rollout = await eventually(`${env}-web to be Healthy`, async () => {
        const r = await p.rollout(`${env}-web`);
        return r?.status?.phase === 'Healthy' ? r : undefined;
      });
      expect(imageOf(rollout)).toBe(env === 'staging' ? 'nginx:1.1' : 'nginx:1.0');
      expect(rollout.metadata.annotations?.['rollgate.dev/file']).toBe(
        `apps/web/overlays/${env}/kustomization.yaml`,
      );
      await p.clients.core.readNamespacedService({ name: `${env}-web`, namespace: 'default' });
    }
    const generated = await configMapNames(p);
    expect(generated.sort()).toEqual([
      expect.stringMatching(/^prod-web-config-[a-z0-9]{10}$/),
      expect.stringMatching(/^staging-web-config-[a-z0-9]{10}$/),
    ]);
    const state = await p.clients.core.readNamespacedConfigMap({
      name: 'rollgate-source-staging',
      namespace: 'rollgate-system',
    });
    expect(JSON.parse(state.data?.['status'] ?? '{}')).toMatchObject({
      phase: 'Synced',
      render: { renderer: expect.stringMatching(/kustomize/), version: expect.stringMatching(/^v\d/) },
    });
    const prodSets = await p.replicaSets();
    const prodBefore = prodSets.filter((rs) => rs.name.startsWith('prod-web-')).map((rs) => rs.name);
    const stagingRenders = await rendersOf(p, running, 'staging');
    const prodRenders = await rendersOf(p, running, 'prod');

    p.work.write({ 'apps/web/overlays/staging/kustomization.yaml': overlayKustomization('staging', '1.2') });
    p.work.commit('staging: nginx 1.2');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(running);
    const canary = await eventually("staging's canary ReplicaSet with the new image", async () => {
      const sets = await p.replicaSets();
      return sets.find(
        (rs) => rs.name.startsWith('staging-web-') && rs.image === 'nginx:1.2' && rs.replicas > 0,
      );
    });
    expect(canary).toBeDefined();
    await eventually('staging to pause at its canary step', async () => {
      return (await p.rollout('staging-web'))?.status?.phase === 'Paused';
    });
    await eventually('both sources to have synced the push', async () => (await p.syncJobs(running)) >= 4);
    expect(await rendersOf(p, running, 'staging')).toBe(stagingRenders + 1);
    expect(await rendersOf(p, running, 'prod')).toBe(prodRenders);
    expect(imageOf(await p.rollout('prod-web'))).toBe('nginx:1.0');
    expect((await p.rollout('prod-web'))?.status?.phase).toBe('Healthy');
    const prodAfter = (await p.replicaSets())
      .filter((rs) => rs.name.startsWith('prod-web-'))
      .map((rs) => rs.name);
    expect(prodAfter).toEqual(prodBefore);

    // A base change (the generated ConfigMap's data): both overlays render it, both Rollouts get a new revision.
    p.work.write(webLayout({ stagingTag: '1.2', greeting: 'bonjour' }));
    p.work.commit('base: a new greeting');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(running);
    await eventually("prod's canary for the new ConfigMap", async () => {
      const r = await p.rollout('prod-web');
      return r?.status?.phase === 'Paused' ? r : undefined;
    });
    const names = await eventually('a new generated ConfigMap in each overlay', async () => {
      const now = await configMapNames(p);
      return now.filter((name) => !generated.includes(name)).length === 2 ? now : undefined;
    });
    expect(names.length).toBeGreaterThanOrEqual(2);
  });
});

// A render failure in a source of several apps: kustomize-bad-input.test.ts, one test per kind of bad input.
