// When a poll's new head gets a sync job: exactly when no sync covers it (reached, waiting, or running to it).
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { observedHeadKey, RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import { startWorker, type RunningWorker } from '../../../src/queue/start-worker.ts';
import { SyncQueue } from '../../../src/queue/sync-queue.ts';
import { eventually } from '../../support/eventually.ts';
import { gate, openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
let queue: SyncQueue;
let heads: RedisObservedHeads;
let worker: RunningWorker | undefined;

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  queue = new SyncQueue({ connection: scope.connection, prefix: scope.prefix });
  heads = new RedisObservedHeads(scope.connection, scope.prefix);
});

afterEach(async () => {
  await worker?.stop({ force: true });
  worker = undefined;
  await queue.close();
  await scope.cleanup();
});

const H1 = '1'.repeat(40);
const H2 = '2'.repeat(40);

/** What a poll does: record the head it saw, then ask for a sync of it. */
async function poll(commit: string): Promise<string> {
  await heads.record('apps', await heads.ticket('apps'), commit);
  return queue.request({ v: 1, source: 'apps', commit, previousCommit: null, objects: [] });
}

describe('SyncQueue.request', () => {
  it('adds one sync per new head, however many polls see it before, while and after it syncs', async () => {
    const beforeClaim = gate();
    const afterClaim = gate();
    const synced: string[] = [];
    expect(await poll(H1)).toBe('enqueued');
    expect(await poll(H1)).toBe('already-queued');

    worker = startWorker(
      'sync',
      async (payload, context) => {
        if (synced.length === 0) await beforeClaim.promise;
        const { commit } = await heads.claim(payload.source, context.jobId);
        if (synced.length === 0) await afterClaim.promise;
        synced.push(commit ?? 'none');
        if (commit) await heads.markSynced(payload.source, commit);
        return { kind: 'done' };
      },
      { connection: scope.connection, prefix: scope.prefix },
    );
    await eventually('the sync to start', async () => (await queue.queue.getActiveCount()) === 1);
    // Running, not yet read the newest head: it will read this one.
    expect(await poll(H1)).toBe('covered-by-running');
    beforeClaim.open();
    await eventually('the sync to claim its head', async () => {
      const claimed = await scope.connection.hget(observedHeadKey(scope.prefix, 'apps'), 'claimed');
      return claimed === H1;
    });
    expect(await poll(H1)).toBe('covered-by-running');
    // A newer head while it runs: one more sync afterwards, however often it is seen.
    expect(await poll(H2)).toBe('enqueued');
    expect(await poll(H2)).toBe('already-queued');
    afterClaim.open();
    await eventually('both syncs', () => synced.length === 2);
    // And no third: nothing left waiting or running.
    await eventually('no sync waiting or running', async () => {
      const counts = await queue.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
      return Object.values(counts).every((count) => count === 0);
    });
    expect(synced).toEqual([H1, H2]);

    // A poll that read the cluster-side record just before the sync wrote it.
    expect(await poll(H2)).toBe('already-synced');
    // Asked again (the record says otherwise, e.g. edited by hand): the sync runs.
    expect(await poll(H2)).toBe('enqueued');
    await eventually('the third sync', () => synced.length === 3);
  });
});
