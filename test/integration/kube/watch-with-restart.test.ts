// A watch that ends resumes from its last resourceVersion (nothing replayed, nothing missed); one whose
// resourceVersion expired lists again; one whose API server went away keeps trying, backing off.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  WATCH_RESTART_BACKOFF,
  watchWithRestart,
  type WatchRestart,
} from '../../../src/kube/watch-with-restart.ts';
import type { RetryBackoff } from '../../../src/clock/capped-backoff.ts';
import { sandboxKubeConfig, startSandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

/** The shipped backoff (1 s, 2 s, 4 s … at most 30 s, the last fifth random) at a tenth of its pace. */
const TENTH: RetryBackoff = {
  ...WATCH_RESTART_BACKOFF,
  baseMs: WATCH_RESTART_BACKOFF.baseMs / 10,
  capMs: WATCH_RESTART_BACKOFF.capMs / 10,
};

/** A quarter of its pace: a watch down between two connections stays down long enough to write during it. */
const QUARTER: RetryBackoff = {
  ...WATCH_RESTART_BACKOFF,
  baseMs: WATCH_RESTART_BACKOFF.baseMs / 4,
  capMs: WATCH_RESTART_BACKOFF.capMs / 4,
};

describe('watchWithRestart', () => {
  it('restarts at 1 s, 2 s, 4 s … (here a tenth of that) while the API server is down, and resumes when it is back', async () => {
    const sandbox = await startSandbox({});
    const port = new URL(sandbox.url).port;
    const ends: Array<WatchRestart & { at: number }> = [];
    let restarted = 0;
    const watch = await watchWithRestart({
      kubeConfig: sandboxKubeConfig(sandbox.url),
      path: '/api/v1/configmaps',
      query: {},
      onEvent: () => undefined,
      onEnded: (_err, restart) => ends.push({ ...restart, at: performance.now() }),
      onRestarted: () => (restarted += 1),
      backoff: TENTH,
    });
    let again: Awaited<ReturnType<typeof startSandbox>> | undefined;
    try {
      await sandbox.stop();
      await eventually('three failed restarts', () => ends.length >= 3, {
        timeoutMs: 10_000,
        intervalMs: 10,
      });
      const [first, second, third] = ends;
      expect([first, second, third].map((e) => e?.attempt)).toEqual([1, 2, 3]);
      // Each restart waits base·2^(n-1), of which the last fifth is random (a fixed delay would not double)…
      for (const [i, end] of [first!, second!, third!].entries()) {
        expect(end.delayMs).toBeGreaterThanOrEqual(0.8 * TENTH.baseMs * 2 ** i);
        expect(end.delayMs).toBeLessThanOrEqual(TENTH.baseMs * 2 ** i);
      }
      // …and really waits it before trying again (timers fire up to 1 ms early).
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(first!.delayMs - 2);
      expect(third!.at - second!.at).toBeGreaterThanOrEqual(second!.delayMs - 2);
      expect(restarted).toBe(0);

      again = await startSandbox({ port: Number(port) });
      await eventually('the watch to run again', () => restarted === 1, { timeoutMs: 20_000 });
    } finally {
      watch.stop();
      await again?.stop();
    }
  }, 40_000);

  it('resumes a watch that ends from its last resourceVersion: no replay, no relist, no missed change', async () => {
    // Every watch connection is closed after 300 ms, as client-node ends idle watches every 30 s.
    const sandbox = await startSandbox({ faults: { watchDropAfterMs: 300 } });
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = 'default';
    for (const name of ['a', 'b', 'c'])
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: '0' } } });
    const events: Array<[string, string | undefined]> = [];
    const ends: WatchRestart[] = [];
    let lists = 0;
    let relisted = 0;
    let restarted = 0;
    const watch = await watchWithRestart<{ metadata?: { name?: string } }>({
      kubeConfig: sandbox.kubeConfig,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      query: {},
      listResourceVersion: async () => {
        lists += 1;
        const list = await core.listNamespacedConfigMap({ namespace, limit: 1 });
        return list.metadata?.resourceVersion ?? '';
      },
      onEvent: (type, object) => events.push([type, object.metadata?.name]),
      onEnded: (_err, restart) => ends.push(restart),
      onRestarted: () => (restarted += 1),
      onRelisted: () => (relisted += 1),
      backoff: QUARTER,
    });
    try {
      await eventually('three ends and restarts', () => restarted >= 3, { timeoutMs: 15_000 });
      // The objects that existed were never replayed: the watch started at the list's resourceVersion
      // and every restart resumed from there.
      expect(events).toEqual([]);
      expect(lists).toBe(1);
      expect(relisted).toBe(0);
      expect(ends.every((e) => e.reason === 'closed' && e.resumeFrom !== undefined)).toBe(true);

      // A change while the watch is down between two connections is delivered once by the resumed watch.
      await eventually('the watch to be down', () => ends.length > restarted, {
        timeoutMs: 5_000,
        intervalMs: 5,
      });
      await core.patchNamespacedConfigMap({
        name: 'b',
        namespace,
        body: [{ op: 'replace', path: '/data/v', value: '1' }],
      });
      await eventually('the change', () => events.length > 0, { timeoutMs: 5_000 });
      const seen = restarted;
      await eventually('two more restarts', () => restarted >= seen + 2, { timeoutMs: 10_000 });
      expect(events).toEqual([['MODIFIED', 'b']]);

      // Once the history no longer reaches back to its resourceVersion (410 Gone), it lists again, once:
      // a write elsewhere moves the cluster past the watch's resourceVersion, then the history is dropped.
      await core.createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name: 'x' } } });
      const compact = await fetch(`${sandbox.url}/sandbox/compact`, { method: 'POST' });
      expect(compact.status).toBe(200);
      await eventually('a relist', () => relisted === 1, { timeoutMs: 10_000 });
      expect(lists).toBe(2);
      expect(ends.some((e) => e.reason === 'expired' && e.resumeFrom === undefined)).toBe(true);
      await core.patchNamespacedConfigMap({
        name: 'c',
        namespace,
        body: [{ op: 'replace', path: '/data/v', value: '1' }],
      });
      await eventually('the change after the relist', () => events.length === 2, { timeoutMs: 5_000 });
      expect(events).toEqual([
        ['MODIFIED', 'b'],
        ['MODIFIED', 'c'],
      ]);
    } finally {
      watch.stop();
      await sandbox.stop();
    }
  }, 40_000);
});
