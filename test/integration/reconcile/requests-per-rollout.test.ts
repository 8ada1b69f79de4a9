// Requests per rollout to the first pause (issue 37), counted by the sandbox: one status write per job, no reconcile read of the API, and a second process's trailing cache costing no 409s.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ClusterCache } from '../../../src/kube/cluster-cache.ts';
import { RedisWrittenVersions } from '../../../src/queue/written-versions.ts';
import type { RolloutKey } from '../../../src/reconciler/rollout-key.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';
import { informers } from './cache-snapshot.ts';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

const ROLLOUTS = 12;

/** What the sandbox received and answered while `run` ran: watches left out (the informers' own). */
async function counted(run: () => Promise<void>): Promise<{ requests: string[]; conflicts: number }> {
  const requests: string[] = [];
  let conflicts = 0;
  const onRequest = (message: unknown) => {
    const request = (message as { request: IncomingMessage }).request;
    if (!(request.url ?? '').includes('watch=')) requests.push(`${request.method} ${request.url ?? ''}`);
  };
  const onResponse = (message: unknown) => {
    if ((message as { response: ServerResponse }).response.statusCode === 409) conflicts += 1;
  };
  subscribe('http.server.request.start', onRequest);
  subscribe('http.server.response.finish', onResponse);
  try {
    await run();
  } finally {
    unsubscribe('http.server.request.start', onRequest);
    unsubscribe('http.server.response.finish', onResponse);
  }
  return { requests, conflicts };
}

const isEvent = (request: string) => /\/events(\/|\?|$)/.test(request.split(' ')[1] ?? '');

describe('requests per rollout to the first pause', () => {
  let harness: ReconcileHarness;
  let redis: RedisTestScope;
  /** The one-process figure of this run: the two-process test's reference. */
  let onePerRollout: number | undefined;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ readyDelayMs: 100 });
    redis = await openRedisTestScope(inject('redisUrl'));
  });
  afterAll(async () => {
    await harness.stop();
    await redis.cleanup();
  });

  /**
   * ROLLOUTS Healthy canaries (2 replicas, setWeight 50 then pause) get a new image; jobs run in rounds
   * on the given caches in turn (one per process), time moving 1 s between rounds, until every one is
   * at its pause. Returns what the jobs sent.
   */
  async function toFirstPause(prefix: string, caches: ClusterCache[]) {
    const keys: RolloutKey[] = [];
    for (let i = 0; i < ROLLOUTS; i++)
      keys.push(
        await harness.createRollout(
          testRollout({ name: `${prefix}-${i}`, replicas: 2, steps: [{ setWeight: 50 }, { pause: {} }] }),
        ),
      );
    for (const key of keys) await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    for (const key of keys)
      await harness.patchSpec(key, {
        template: {
          metadata: { labels: { app: key.name } },
          spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
        },
      });
    // Every process has seen the new revision (the watch event that enqueued its job).
    for (const cache of caches)
      expect(
        await cache.waitFor(
          () =>
            keys.every(
              (key) =>
                (cache.get('Rollout', NAMESPACE, key.name)?.metadata as { generation?: number })
                  .generation === 2,
            ),
          10_000,
        ),
      ).toBe(true);
    const shared = new RedisWrittenVersions(redis.connection, `${redis.prefix}${prefix}`);
    const paused = new Set<string>();
    let job = 0;
    const sent = await counted(async () => {
      for (let round = 0; round < 10 && paused.size < ROLLOUTS; round++) {
        for (const key of keys) {
          if (paused.has(key.name)) continue;
          const cache = caches[job++ % caches.length]!;
          await harness.reconcile(
            key,
            {
              cache,
              writtenVersions: shared,
              onPass: ({ plan }) => {
                if (plan.status.phase === 'Paused') paused.add(key.name);
              },
            },
            false,
          );
        }
        await harness.sandbox.advance(1_000);
      }
    });
    for (const key of keys) expect((await harness.rollout(key)).status?.phase).toBe('Paused');
    const reconcile = sent.requests.filter((request) => !isEvent(request));
    return {
      perRollout: reconcile.length / ROLLOUTS,
      reads: reconcile.filter((request) => request.startsWith('GET ')),
      events: (sent.requests.length - reconcile.length) / ROLLOUTS,
      conflicts: sent.conflicts,
    };
  }

  it('one process: 5 requests per rollout (canary created, revision annotated, stable scaled, two status writes), no API read', async () => {
    const live = await informers(harness);
    try {
      const sent = await toFirstPause('one', [live.cache]);
      // The floor's 2 (create the ReplicaSet, write the status) plus the revision annotation Argo keeps on
      // the Rollout, the stable's scale-down once the canary is available, and the status the job that
      // created the canary writes while its pods start (docs/BENCHMARKS.md, issue 37).
      expect(sent.perRollout).toBeLessThanOrEqual(5);
      onePerRollout = sent.perRollout;
      expect(sent.reads).toEqual([]);
      expect(sent.conflicts).toBe(0);
      // Events are counted apart: RolloutUpdated, ReplicaSetCreated, RolloutStepCompleted, RolloutPaused.
      expect(sent.events).toBeLessThanOrEqual(4);
      expect(harness.violations).toEqual([]);
    } finally {
      live.stop();
    }
  }, 120_000);

  it('two processes taking the jobs in turn: no 409 storm, within 1.1× the one-process requests', async () => {
    const a = await informers(harness);
    const b = await informers(harness);
    try {
      const sent = await toFirstPause('two', [a.cache, b.cache]);
      // The written-versions handover makes the other process's trailing cache wait (or read the API)
      // instead of planning from it: a stale read may cost a re-plan, never a round of 409s.
      expect(sent.conflicts).toBeLessThanOrEqual(1);
      // The issue asks ≤ 1.2×; both measure 5.00 (docs/BENCHMARKS.md): the margin is for a re-plan or two
      // of a job whose cache trailed past the handover's wait.
      expect(sent.perRollout).toBeLessThanOrEqual((onePerRollout ?? 5) * 1.1);
      expect(harness.violations).toEqual([]);
    } finally {
      a.stop();
      b.stop();
    }
  }, 120_000);
});
