// The pipeline under trouble: a worker dies mid-rollout, a burst of pushes, prune, drift (Redis and API
// server outages: outages.test.ts).
import { afterEach, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { rolloutYaml, startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const timedSteps = '        - setWeight: 50\n        - pause: { duration: 2s }';

describe('pipeline resilience', () => {
  it('finishes a rollout on another worker when the first one dies mid-canary', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0', steps: timedSteps }) });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    const first = await p.start({ lockDurationMs: 2_000 });
    await eventually(
      'the first revision to be stable',
      async () => (await p.rollout('web'))?.status?.phase === 'Healthy',
    );

    p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:2.0', steps: timedSteps }) });
    p.work.commit('second');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(first);
    await eventually('the canary to start', async () =>
      (await p.replicaSets()).some((rs) => rs.image === 'web:2.0' && rs.replicas > 0),
    );
    await first.stop({ force: true });

    await p.start({ lockDurationMs: 2_000 });
    const done = await eventually(
      'the second worker to complete the rollout',
      async () => {
        const r = await p.rollout('web');
        // The first worker can die after creating the canary but before writing the status, which then
        // still describes revision 1 as Healthy: only a status that has seen the current spec counts.
        return r?.status?.phase === 'Healthy' &&
          r.status.observedGeneration === String(r.metadata?.generation) &&
          r.status.stableRS === r.status.currentPodHash
          ? r
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const sets = await p.replicaSets();
    expect(sets.find((rs) => rs.hash === done.status?.stableRS)?.image).toBe('web:2.0');
    // Healthy is written by the completing pass, which only dates the old stable for scale-down (now, with
    // scaleDownDelaySeconds 0); the next pass scales it to 0 (docs/rollout.md, Completion). That pass is the
    // second worker's own wake-up: 10 s is far inside the 3-minute resync, so a scale-down lost in the
    // takeover still fails here.
    await eventually(
      'the old stable scaled down by the next pass',
      async () => (await p.replicaSets()).filter((rs) => rs.replicas > 0).length === 1,
      { timeoutMs: 10_000 },
    );
    const left = (await p.replicaSets()).filter((rs) => rs.replicas > 0);
    expect(left.map((rs) => rs.hash)).toEqual([done.status?.stableRS]);
  }, 60_000);

  it('turns a burst of 50 pushes into a few polls', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'cm.yaml': configMapYaml('burst', { n: '0' }) });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    const running = await p.start();
    await eventually('the first sync', async () => (await p.polls(running)) >= 1);
    const before = await p.polls(running);

    p.work.write({ 'cm.yaml': configMapYaml('burst', { n: '50' }) });
    p.work.commit('burst');
    await p.work.push(p.repoUrl);
    const answers = await Promise.all(Array.from({ length: 50 }, () => p.pushWebhook(running)));
    // The same signed body under 50 delivery ids is one delivery (the others are replays, issue 26):
    // accepted once, the 49 others answered as duplicates.
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(49);
    await eventually('the pushed change to arrive', async () => {
      const cm = await p.clients.core.readNamespacedConfigMap({ name: 'burst', namespace: 'default' });
      return cm.data?.n === '50';
    });
    // The burst's polls have all run once none is waiting or running.
    await eventually('no poll waiting or running', async () => {
      const counts = await running.poller?.queues.poll.queue.getJobCounts('waiting', 'active', 'prioritized');
      return Object.values(counts ?? {}).every((count) => count === 0);
    });
    const polls = (await p.polls(running)) - before;
    expect(polls).toBeGreaterThanOrEqual(1);
    // Deduplication keeps one running and one pending poll per source (exactly 2 for a burst during one
    // poll: test/integration/queue/poll-queue.test.ts). This burst of HTTP deliveries outlasts a poll, so
    // it costs one poll per poll run it overlaps (5 or 6 measured on 2 cores), never one per push.
    expect(polls).toBeLessThanOrEqual(10);
  });

  it('prunes objects removed from Git only when the source says prune, and re-applies drift with selfHeal', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({
      'keep.yaml': configMapYaml('keep', { v: 'git' }),
      'gone.yaml': configMapYaml('gone', { v: '1' }),
    });
    p.work.commit('first');
    await p.work.push(p.repoUrl);
    const running = await p.start({ prune: true, selfHeal: true, interval: '1s' });
    const read = async (name: string): Promise<Record<string, string> | undefined> => {
      try {
        return (await p.clients.core.readNamespacedConfigMap({ name, namespace: 'default' })).data;
      } catch {
        return undefined;
      }
    };
    await eventually('both ConfigMaps', async () => (await read('keep')) && (await read('gone')));

    // Someone edits the live object by hand: selfHeal puts Git's value back.
    const live = await p.clients.core.readNamespacedConfigMap({ name: 'keep', namespace: 'default' });
    await p.clients.core.replaceNamespacedConfigMap({
      name: 'keep',
      namespace: 'default',
      body: { ...live, data: { v: 'hand-edited' } },
    });
    await eventually('selfHeal to restore the value from Git', async () => (await read('keep'))?.v === 'git');

    // An object Rollgate did not apply is never pruned.
    await p.clients.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'handmade' }, data: { v: 'mine' } },
    });
    p.work.write({ 'gone.yaml': null });
    p.work.commit('remove one');
    await p.work.push(p.repoUrl);
    await p.pushWebhook(running);
    await eventually('the removed object to be pruned', async () => (await read('gone')) === undefined);
    expect(await read('keep')).toEqual({ v: 'git' });
    expect(await read('handmade')).toEqual({ v: 'mine' });
  });
});
