// When the reconcile job looks again (analysis vs rollout requeue), what it does when measuring fails, and how a Job's status reads.
import type { V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { KubeClients } from '../../../src/kube/client.ts';
import { KubeThrottledError } from '../../../src/kube/errors.ts';
import { jobRunStatus } from '../../../src/reconciler/job-runner.ts';
import { ReconcileRetryError } from '../../../src/reconciler/reconcile-retry-error.ts';
import type { ReconcileOutcome } from '../../../src/reconciler/reconcile-rollout.ts';
import {
  reconcileRolloutWithAnalysis,
  withAnalysisRequeue,
} from '../../../src/reconciler/reconcile-with-analysis.ts';
import { silentLogger } from '../../../src/log/logger.ts';

const stats = { passes: 1, writes: 2, conflicts: 0, transientErrors: 0 };

describe('withAnalysisRequeue', () => {
  const rows: Array<{ name: string; given: ReconcileOutcome; analysis?: number; want: ReconcileOutcome }> = [
    {
      name: 'no analysis requeue keeps done',
      given: { kind: 'done' },
      want: { kind: 'done' },
    },
    {
      name: 'done becomes a requeue at the analysis time',
      given: { kind: 'done', stats },
      analysis: 10_000,
      want: { kind: 'requeue', afterMs: 10_000, reason: 'analysis', stats },
    },
    {
      name: 'an earlier analysis time wins over a later rollout requeue',
      given: { kind: 'requeue', afterMs: 30_000, reason: 'pause' },
      analysis: 5_000,
      want: { kind: 'requeue', afterMs: 5_000, reason: 'analysis' },
    },
    {
      name: 'an earlier rollout requeue is kept',
      given: { kind: 'requeue', afterMs: 1_000, reason: 'pods' },
      analysis: 5_000,
      want: { kind: 'requeue', afterMs: 1_000, reason: 'pods' },
    },
    {
      name: 'the same time on both sides keeps the rollout requeue and its reason',
      given: { kind: 'requeue', afterMs: 5_000, reason: 'pause end', stats },
      analysis: 5_000,
      want: { kind: 'requeue', afterMs: 5_000, reason: 'pause end', stats },
    },
    {
      name: 'stalled stays stalled',
      given: { kind: 'stalled', reason: 'invalid' },
      analysis: 1_000,
      want: { kind: 'stalled', reason: 'invalid' },
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(withAnalysisRequeue(row.given, row.analysis)).toEqual(row.want);
    });
});

describe('reconcileRolloutWithAnalysis when the runs cannot be read', () => {
  it('still reconciles the rollout, then throws for the queue to retry (at least the Retry-After)', async () => {
    const throttled = new KubeThrottledError(
      'get Rollout/prod/web: HTTP 429',
      { verb: 'get', kind: 'Rollout' },
      429,
      undefined,
    );
    throttled.retryAfterMs = 3_000;
    const clients = {
      custom: { getNamespacedCustomObject: () => Promise.reject(throttled) },
    } as unknown as KubeClients;
    const reconciled: string[] = [];
    const error = await reconcileRolloutWithAnalysis(
      { namespace: 'prod', name: 'web' },
      {
        clients,
        clock: new ManualClock(0),
        logger: silentLogger,
        reconcile: async (key) => {
          reconciled.push(key.name);
          return { kind: 'requeue', afterMs: 30_000, reason: 'timer', stats };
        },
      },
    ).catch((e: unknown) => e);
    expect(reconciled).toEqual(['web']);
    expect(error).toBeInstanceOf(ReconcileRetryError);
    expect(error).toMatchObject({
      code: 'kube.reconcile_retry',
      stage: 'analysis',
      retryAfterMs: 3_000,
      stats,
    });
  });

  it('hands back a stalled rollout as stalled whatever the analysis side says', async () => {
    const clients = {
      custom: { getNamespacedCustomObject: () => Promise.reject(new Error('socket hang up')) },
    } as unknown as KubeClients;
    const outcome = await reconcileRolloutWithAnalysis(
      { namespace: 'prod', name: 'web' },
      {
        clients,
        clock: new ManualClock(0),
        logger: silentLogger,
        reconcile: async () => ({ kind: 'stalled', reason: 'invalid' }),
      },
    );
    expect(outcome).toEqual({ kind: 'stalled', reason: 'invalid' });
  });
});

describe('jobRunStatus', () => {
  const condition = (type: string, status = 'True') => ({ type, status });
  it.each([
    ['no status yet', {}, 'Running'],
    ['active pod', { status: { active: 1 } }, 'Running'],
    ['Complete condition', { status: { conditions: [condition('Complete')] } }, 'Succeeded'],
    ['succeeded pod before the condition', { status: { succeeded: 1 } }, 'Succeeded'],
    ['Failed condition', { status: { conditions: [condition('Failed')] } }, 'Failed'],
    [
      'Failed wins over a succeeded pod',
      { status: { succeeded: 1, conditions: [condition('Failed')] } },
      'Failed',
    ],
    [
      'a False condition does not count',
      { status: { conditions: [condition('Complete', 'False')] } },
      'Running',
    ],
  ] as const)('%s → %s', (_name, job, want) => {
    expect(jobRunStatus(job as V1Job)).toBe(want);
  });
});
