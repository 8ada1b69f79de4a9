// Watches that end all the time (a real API server's idle watches end every 30 s) cost a resumed watch
// request each, never a re-list and re-enqueue of every rollout.
import { PassThrough } from 'node:stream';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { eventually } from '../../support/eventually.ts';
import { rolloutYaml, startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

describe('watch restarts of a running reconciler', () => {
  it('resume the watches without re-enqueueing any rollout, and still see the next change', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    // Every watch connection is closed after 300 ms: an idle cluster's watches, 100 times faster.
    p.sandbox.faults.watchDropAfterMs = 300;
    p.work.write({
      'a.yaml': rolloutYaml({ name: 'a', image: 'nginx:1.27' }),
      'b.yaml': rolloutYaml({ name: 'b', image: 'nginx:1.27' }),
    });
    p.work.commit('two rollouts');
    await p.work.push(p.repoUrl);

    const out = new PassThrough();
    let logged = '';
    out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const resumed = (): number =>
      logged.split('\n').filter((l) => l.includes('watch ended; resuming it')).length;
    const running = await p.start({
      interval: '100ms',
      logger: createLogger({ level: 'debug', format: 'json', destination: out }),
    });
    await eventually(
      'both rollouts healthy',
      async () =>
        (await p.rollout('a'))?.status?.phase === 'Healthy' &&
        (await p.rollout('b'))?.status?.phase === 'Healthy',
      { timeoutMs: 30_000 },
    );
    // Settled: no reconcile job for a second.
    let jobs = -1;
    await eventually(
      'reconciles to settle',
      async () => {
        const now = await p.reconcileJobs(running);
        const settled = now === jobs;
        jobs = now;
        return settled;
      },
      { timeoutMs: 20_000, intervalMs: 1_000 },
    );

    // Two watches (Rollouts, owned ReplicaSets), each ended and resumed more than once …
    const endsBefore = resumed();
    await eventually('four watch resumes', () => resumed() - endsBefore >= 4, {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    // … and not one rollout was enqueued for it.
    expect(await p.reconcileJobs(running)).toBe(jobs);
    expect(logged).not.toContain('re-enqueueing all rollouts');

    // A change made between two watch connections still reaches the reconciler.
    await p.clients.custom.patchNamespacedCustomObject(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'a',
        body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:1.28' }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually('the change to be reconciled', async () => (await p.reconcileJobs(running)) > jobs, {
      timeoutMs: 10_000,
    });
  }, 90_000);
});
