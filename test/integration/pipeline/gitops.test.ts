// Git → webhook/poll → sync → reconcile, end to end: real git CLI, git http-backend, Redis, sandbox cluster.
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { rolloutYaml, startPipeline, type LiveRollout, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const imageOf = (rollout: LiveRollout | undefined): string | undefined =>
  rollout?.spec?.template?.spec?.containers?.[0]?.image;

describe('GitOps pipeline', () => {
  it('applies a Rollout from Git as rollgate.dev/v1alpha1, then follows a push at once through the webhook', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({
      'apps/web.yaml': rolloutYaml({ image: 'web:1.0' }),
      'apps/config.yaml': configMapYaml('web-config', { a: '1' }),
    });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    const running = await p.start();

    const first = await eventually('the rollout to be applied and healthy', async () => {
      const r = await p.rollout('web');
      return r?.status?.phase === 'Healthy' ? r : undefined;
    });
    expect(first.apiVersion).toBe('rollgate.dev/v1alpha1');
    expect(first.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'rollgate',
      'rollgate.dev/source': 'apps',
    });
    expect(first.metadata.annotations?.['rollgate.dev/file']).toBe('apps/web.yaml');
    const cm = await p.clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
    expect(cm.data).toEqual({ a: '1' });

    p.work.write({ 'apps/web.yaml': rolloutYaml({ image: 'web:2.0' }) });
    const commit = p.work.commit('new image');
    await p.work.push(p.repoUrl);
    const response = await p.pushWebhook(running);
    expect(response.status).toBe(202);

    // The source interval is an hour: only the webhook can have brought this in.
    const canary = await eventually('a canary ReplicaSet with the new image', async () => {
      const sets = await p.replicaSets();
      return sets.find((rs) => rs.image === 'web:2.0' && rs.replicas > 0);
    });
    expect(canary.name).toMatch(/^web-[a-z0-9]+$/);
    const paused = await eventually('the canary to pause at its indefinite pause step', async () => {
      const r = await p.rollout('web');
      return r?.status?.phase === 'Paused' ? r : undefined;
    });
    expect(paused.metadata.annotations?.['rollgate.dev/commit']).toBe(commit);
    expect(paused.status?.currentStepIndex).toBe(1);
    const state = await p.clients.core.readNamespacedConfigMap({
      name: 'rollgate-source-apps',
      namespace: 'rollgate-system',
    });
    expect(state.data?.['commit']).toBe(commit);
    expect(JSON.parse(state.data?.['status'] ?? '{}')).toMatchObject({ phase: 'Synced', commit });
  });

  it('refuses a webhook with a bad signature and leaves the cluster as it was', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0' }) });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    const running = await p.start();
    await eventually('the first sync', async () => (await p.rollout('web'))?.status?.phase === 'Healthy');

    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:2.0' }) });
    p.work.commit('unsigned change');
    await p.work.push(p.repoUrl);
    const pollQueue = running.poller?.queues.poll.queue;
    const pending = async () => pollQueue?.getJobCounts('waiting', 'active', 'prioritized');
    await eventually('no poll waiting or running', async () =>
      Object.values((await pending()) ?? {}).every((count) => count === 0),
    );
    const polls = await p.polls(running);
    const response = await p.pushWebhook(running, { secret: 'wrong-secret' });
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain('pipeline-test-secret');
    // A push Rollgate accepts has its poll enqueued before the answer (202); with none waiting or running
    // and none run since, nothing is coming that could deploy the unsigned commit (polls are 1 h apart here).
    expect(await pending()).toEqual({ waiting: 0, active: 0, prioritized: 0 });
    expect(await p.polls(running)).toBe(polls);
    expect(imageOf(await p.rollout('web'))).toBe('web:1.0');
  });

  it('follows Git by polling alone, and deploys the valid objects of a commit when one file is malformed', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0' }) });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    await p.start({ interval: '1s' });
    await eventually('the first sync', async () => (await p.rollout('web'))?.status?.phase === 'Healthy');

    p.work.write({
      'broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata: [unclosed\n',
      'good.yaml': configMapYaml('good', { ok: 'yes' }),
    });
    p.work.commit('one good file, one broken');
    await p.work.push(p.repoUrl);

    const good = await eventually('the valid ConfigMap to be applied by a scheduled poll', async () => {
      try {
        return await p.clients.core.readNamespacedConfigMap({ name: 'good', namespace: 'default' });
      } catch {
        return undefined;
      }
    });
    expect(good.data).toEqual({ ok: 'yes' });
    const status = await eventually('the source status to name the broken file', async () => {
      const cm = await p.clients.core.readNamespacedConfigMap({
        name: 'rollgate-source-apps',
        namespace: 'rollgate-system',
      });
      const parsed = JSON.parse(cm.data?.['status'] ?? '{}') as {
        phase?: string;
        problems?: Array<{ file: string; line: number }>;
      };
      return parsed.phase === 'Degraded' ? parsed : undefined;
    });
    expect(status.problems?.[0]).toMatchObject({ file: 'broken.yaml' });
    expect(status.problems?.[0]?.line).toBeGreaterThan(0);
  });

  it('leaves the cluster untouched while the Git server is down, says why and what runs, and recovers', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0' }) });
    const first = p.work.commit('first');
    await p.work.push(p.repoUrl);
    await p.start({ interval: '1s' });
    await eventually('the first sync', async () => (await p.rollout('web'))?.status?.phase === 'Healthy');
    const before = await sourceStatus(p);
    expect(before).toMatchObject({ phase: 'Synced', commit: first });

    p.git.setDown(true);
    const failed = await eventually('the source status to report the outage', async () => {
      const status = await sourceStatus(p);
      return status.phase === 'Failed' ? status : undefined;
    });
    expect(failed.message).toMatch(/poll failed/);
    // What the cluster runs is still known: the last synced commit and when it was synced.
    expect(failed).toMatchObject({ commit: first, lastSyncedAt: before.lastSyncedAt });
    expect((failed.lastAttemptAt ?? '') > (before.lastAttemptAt ?? '')).toBe(true);
    expect(imageOf(await p.rollout('web'))).toBe('web:1.0');

    p.git.setDown(false);
    const recovered = await eventually('the status to recover with Git, before any new commit', async () => {
      const status = await sourceStatus(p);
      return status.phase === 'Synced' ? status : undefined;
    });
    expect(recovered).toMatchObject({ commit: first, lastSyncedAt: before.lastSyncedAt });
    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:3.0' }) });
    p.work.commit('after the outage');
    await p.work.push(p.repoUrl);
    await eventually(
      'the change made during recovery to arrive',
      async () => imageOf(await p.rollout('web')) === 'web:3.0',
    );
  });
});

/** The `apps` source status in its rollgate-source-apps ConfigMap. */
async function sourceStatus(p: Pipeline): Promise<Partial<SourceStatus>> {
  const cm = await p.clients.core.readNamespacedConfigMap({
    name: 'rollgate-source-apps',
    namespace: 'rollgate-system',
  });
  return JSON.parse(cm.data?.['status'] ?? '{}') as Partial<SourceStatus>;
}
