// The poller gives a large sync's heap back: a full collection after a sync that wrote many objects, none after a small one.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;

afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

/** `count` ConfigMaps `cm-0` … whose data carries `value`, one file each. */
function configMaps(count: number, value: string): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`cm-${i}.yaml`, configMapYaml(`cm-${i}`, { value })]),
  );
}

describe('large-sync collection in the poller', () => {
  it('collects after each sync that wrote at least the threshold, counting only objects it changed', async () => {
    const p = (pipeline = await startPipeline(inject('redisUrl')));
    p.work.write(configMaps(4, 'a'));
    p.work.commit('four ConfigMaps');
    await p.work.push(p.repoUrl);
    const collections: number[] = [];
    const running = await p.start({
      poller: {
        largeSyncCollection: {
          threshold: 3,
          delayMs: 0,
          secondDelayMs: 0,
          minIntervalMs: 0,
          collect: () => collections.push(Date.now()),
        },
      },
    });
    // The first sync writes all four: a collection, then the second one it always brings.
    await eventually('the collections after the first sync', () => collections.length === 2, {
      intervalMs: 20,
    });

    /** Commits `files`, sends the push webhook, and waits until its sync job has finished. */
    const syncCommit = async (files: Record<string, string>, message: string): Promise<void> => {
      const syncsBefore = await p.syncJobs(running);
      p.work.write(files);
      p.work.commit(message);
      await p.work.push(p.repoUrl);
      expect((await p.pushWebhook(running)).status).toBe(202);
      await eventually(message, async () => (await p.syncJobs(running)) > syncsBefore, { intervalMs: 20 });
      // The collections are two chained 0 ms timers, the first set before the job was counted finished:
      // timers of one length fire in the order they were set, so two more turns of ours come after both.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    };

    // One object changed among four: below the threshold, so no collection.
    await syncCommit({ 'cm-0.yaml': configMapYaml('cm-0', { value: 'b' }) }, 'one ConfigMap changed');
    expect(collections).toHaveLength(2);

    // Three changed: at the threshold again.
    await syncCommit(configMaps(3, 'c'), 'three ConfigMaps changed');
    const cluster = await p.clients.core.readNamespacedConfigMap({ name: 'cm-2', namespace: 'default' });
    expect(cluster.data).toEqual({ value: 'c' });
    expect(collections).toHaveLength(4);
  });
});
