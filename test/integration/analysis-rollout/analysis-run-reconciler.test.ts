// reconcileAnalysisRuns, the kube JobRunner and the Secret resolver through the real client against the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import type { MetricProvider } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRuns } from '../../../src/reconciler/analysis-run-reconciler.ts';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { createKubeJobRunner } from '../../../src/reconciler/job-runner.ts';
import type { RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { reconcileRolloutWithAnalysis } from '../../../src/reconciler/reconcile-with-analysis.ts';
import { ANALYSIS_SECRET_LABEL, createKubeSecretResolver } from '../../../src/reconciler/secret-resolver.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import {
  NAMESPACE,
  ReconcileHarness,
  analysisRunsOf,
  createAnalysisTemplate,
  driveUntil,
  reconcileWithAnalysis,
} from './analysis-harness.ts';
import { sandboxJobSpec } from '../../support/sandbox-job.ts';

const RUNS = { group: ROLLGATE_API_GROUP, version: 'v1alpha1', namespace: NAMESPACE, plural: 'analysisruns' };

/** A fake `web` provider answering `value`, remembering the metric it was given (secrets filled in). */
function fakeWeb(answer: (metric: Metric) => Promise<unknown> | unknown): {
  provider: MetricProvider;
  seen: Metric[];
} {
  const seen: Metric[] = [];
  return {
    seen,
    provider: {
      type: 'web',
      async measure(metric) {
        seen.push(metric);
        const value = await answer(metric);
        return { value, raw: String(value) };
      },
    },
  };
}

describe('reconcileAnalysisRuns against the sandbox', () => {
  let harness: ReconcileHarness;
  let rollout: RolloutKey;
  let rolloutUid: string;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 61 });
    rollout = await harness.createRollout(testRollout({ name: 'owner' }));
    rolloutUid = await uidOf(rollout);
    await harness.clients.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'creds', labels: { [ANALYSIS_SECRET_LABEL]: 'true' } },
        data: { token: Buffer.from('s3cr3t-token').toString('base64') },
      },
    });
  });
  afterAll(async () => harness.stop());

  async function createRun(
    name: string,
    spec: Record<string, unknown>,
    ownerUid = rolloutUid,
  ): Promise<void> {
    await harness.clients.custom.createNamespacedCustomObject({
      ...RUNS,
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'AnalysisRun',
        metadata: {
          name,
          // As the executor labels runs; `foreign` below carries it too, so ownership alone must exclude it.
          labels: { 'rollgate.dev/rollout': 'owner' },
          ownerReferences: [
            {
              apiVersion: ROLLGATE_API_VERSION,
              kind: 'Rollout',
              name: 'owner',
              uid: ownerUid,
              controller: true,
            },
          ],
        },
        spec,
      },
    });
  }

  async function uidOf(key: RolloutKey): Promise<string> {
    return String(((await harness.rollout(key)).metadata as { uid?: string }).uid);
  }

  async function readRun(name: string): Promise<AnalysisRun> {
    return (await harness.clients.custom.getNamespacedCustomObject({ ...RUNS, name })) as AnalysisRun;
  }

  async function deleteRun(name: string): Promise<void> {
    await harness.clients.custom.deleteNamespacedCustomObject({ ...RUNS, name });
  }

  /** What reconcileAnalysisRuns runs on: the harness's clients and clock, measuring with `web` alone. */
  const measuringWith = (web: { provider: MetricProvider }) => ({
    clients: harness.clients,
    clock: harness.clock,
    logger: silentLogger,
    providers: createMetricProviderRegistry([web.provider]),
  });

  const webMetric = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    interval: '10s',
    count: 2,
    successCondition: 'result == 1',
    provider: { web: { url: 'http://127.0.0.1:1/never-called' } },
    ...extra,
  });

  it('measures when due, writes status, skips unchanged writes, and stops once the run is finished', async () => {
    const web = fakeWeb(() => 1);
    const deps = measuringWith(web);
    await createRun('counted', { metrics: [webMetric('ok')] });
    const first = await reconcileAnalysisRuns(rollout, deps);
    expect(first.written).toEqual(['counted']);
    expect(first.requeueAfterMs).toBe(10_000);
    let run = await readRun('counted');
    expect(run.status?.phase).toBe('Running');
    expect(run.status?.metricResults?.[0]?.measurements?.map((m) => m.phase)).toEqual(['Successful']);

    const idle = await reconcileAnalysisRuns(rollout, deps);
    expect(idle.written).toEqual([]);
    expect(web.seen).toHaveLength(1);

    await harness.sandbox.advance(10_000);
    await reconcileAnalysisRuns(rollout, deps);
    run = await readRun('counted');
    expect(run.status?.phase).toBe('Successful');
    expect(run.status?.metricResults?.[0]?.count).toBe(2);

    await harness.sandbox.advance(10_000);
    const done = await reconcileAnalysisRuns(rollout, deps);
    expect(done).toEqual({ written: [], conflicts: [] });
    expect(web.seen).toHaveLength(2);
    await deleteRun('counted');
  });

  it('leaves runs of other rollouts alone', async () => {
    const web = fakeWeb(() => 1);
    const other = await harness.createRollout(testRollout({ name: 'other' }));
    // A dependent whose owner does not exist is garbage-collected, so the other owner is real.
    await createRun('foreign', { metrics: [webMetric('ok')] }, await uidOf(other));
    const outcome = await reconcileAnalysisRuns(rollout, measuringWith(web));
    expect(outcome.written).toEqual([]);
    expect(web.seen).toHaveLength(0);
    expect((await readRun('foreign')).status).toBeUndefined();
    await deleteRun('foreign');
  });

  /** A `web` provider whose first measurement of `run` sees the run changed meanwhile (as a user's edit would). */
  const racingWeb = (run: string) => {
    let interfere = true;
    return fakeWeb(async () => {
      if (interfere) {
        interfere = false;
        await harness.clients.custom.patchNamespacedCustomObject(
          { ...RUNS, name: run, body: { metadata: { labels: { touched: 'yes' } } } },
          MERGE_PATCH,
        );
      }
      return 1;
    });
  };

  it('never overwrites a run changed while it was measured: 409, the change survives, measured again next time', async () => {
    const deps = measuringWith(racingWeb('raced'));
    await createRun('raced', { metrics: [webMetric('ok')] });
    const lost = await reconcileAnalysisRuns(rollout, deps);
    expect(lost.conflicts).toEqual(['raced']);
    expect(lost.written).toEqual([]);
    let run = await readRun('raced');
    expect(run.metadata.labels?.touched).toBe('yes');
    expect(run.status).toBeUndefined();

    const retried = await reconcileAnalysisRuns(rollout, deps);
    expect(retried.written).toEqual(['raced']);
    run = await readRun('raced');
    expect(run.metadata.labels?.touched).toBe('yes');
    expect(run.status?.metricResults?.[0]?.measurements).toHaveLength(1);
    await deleteRun('raced');
  });

  it('measures a run that lost a race again in the same job, at once, then waits for its interval', async () => {
    const web = racingWeb('raced-job');
    await createRun('raced-job', { metrics: [webMetric('ok')] });
    const stats = { passes: 1, writes: 0, conflicts: 0, transientErrors: 0 };
    const outcome = await reconcileRolloutWithAnalysis(rollout, {
      ...measuringWith(web),
      reconcile: async () => ({ kind: 'done', stats }),
    });
    expect(web.seen).toHaveLength(2);
    const run = await readRun('raced-job');
    expect(run.metadata.labels?.touched).toBe('yes');
    expect(run.status?.metricResults?.[0]?.measurements).toHaveLength(1);
    // Measured, so the rollout was reconciled once more in the same job (stats summed over both calls).
    expect(outcome).toEqual({
      kind: 'requeue',
      afterMs: 10_000,
      reason: 'analysis',
      stats: { ...stats, passes: 2 },
    });
    await deleteRun('raced-job');
  });

  it('gives a terminated run its final status', async () => {
    const web = fakeWeb(() => 1);
    const deps = measuringWith(web);
    await createRun('stopped', { metrics: [webMetric('forever', { count: undefined })] });
    await reconcileAnalysisRuns(rollout, deps);
    expect((await readRun('stopped')).status?.phase).toBe('Running');
    await harness.clients.custom.patchNamespacedCustomObject(
      { ...RUNS, name: 'stopped', body: { spec: { terminate: true } } },
      MERGE_PATCH,
    );
    const outcome = await reconcileAnalysisRuns(rollout, deps);
    expect(outcome.written).toEqual(['stopped']);
    expect(outcome.requeueAfterMs).toBeUndefined();
    expect((await readRun('stopped')).status?.phase).toBe('Successful');
    await deleteRun('stopped');
  });

  it('fills secretKeyRef args from the Secret for the request only, and never stores the value', async () => {
    const web = fakeWeb((metric) => {
      throw new Error(`upstream refused header ${metric.provider.web?.headers?.[0]?.value ?? ''}`);
    });
    const deps = measuringWith(web);
    await createRun('secret', {
      args: [{ name: 'token', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } }],
      metrics: [
        webMetric('auth', {
          provider: {
            web: {
              url: 'http://127.0.0.1:1/x',
              headers: [{ key: 'Authorization', value: 'Bearer {{args.token}}' }],
            },
          },
        }),
      ],
    });
    await reconcileAnalysisRuns(rollout, deps);
    expect(web.seen[0]?.provider.web?.headers?.[0]?.value).toBe('Bearer s3cr3t-token');
    const stored = JSON.stringify(await readRun('secret'));
    expect(stored).not.toContain('s3cr3t-token');
    expect(stored).toContain('[redacted]');
    await deleteRun('secret');
  });

  it('resolves Secret keys, and names the Secret (never a value) when it or the key is missing', async () => {
    const resolve = createKubeSecretResolver(harness.clients);
    expect(await resolve(NAMESPACE, 'creds', 'token')).toBe('s3cr3t-token');
    await expect(resolve(NAMESPACE, 'creds', 'nope')).rejects.toMatchObject({
      code: 'kube.secret_key_missing',
      message: expect.stringContaining('default/creds') as unknown,
    });
    await expect(resolve(NAMESPACE, 'absent', 'token')).rejects.toMatchObject({ code: 'kube.not_found' });
  });

  it('runs a Job owned by its run: idempotent create, status from conditions, delete twice is fine', async () => {
    const runner = createKubeJobRunner(harness.clients);
    await createRun('job-owner', { metrics: [webMetric('ok')] });
    const ownerUid = String((await readRun('job-owner')).metadata.uid);
    const owner = {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'AnalysisRun' as const,
      name: 'job-owner',
      uid: ownerUid,
    };
    const manifest = (name: string, result: 'succeed' | 'fail') => ({
      metadata: { name, labels: { purpose: 'test' } },
      spec: sandboxJobSpec(result),
    });
    expect(await runner.create(NAMESPACE, manifest('passing', 'succeed'), owner)).toBe('passing');
    expect(await runner.create(NAMESPACE, manifest('passing', 'succeed'), owner)).toBe('passing');
    await runner.create(NAMESPACE, manifest('failing', 'fail'), owner);
    const job = await harness.clients.batch.readNamespacedJob({ namespace: NAMESPACE, name: 'passing' });
    expect(job.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'AnalysisRun', name: 'job-owner', uid: ownerUid, controller: true }),
    ]);
    expect(await runner.status(NAMESPACE, 'passing')).toBe('Running');
    await harness.sandbox.advance(5_000);
    await harness.sandbox.advance(5_000);
    expect(await runner.status(NAMESPACE, 'passing')).toBe('Succeeded');
    expect(await runner.status(NAMESPACE, 'failing')).toBe('Failed');
    await runner.delete(NAMESPACE, 'passing');
    await runner.delete(NAMESPACE, 'passing');
    await runner.delete(NAMESPACE, 'failing');
    await expect(runner.status(NAMESPACE, 'passing')).rejects.toMatchObject({ code: 'kube.not_found' });
    await deleteRun('job-owner');
  });

  it('measures a run in the same job that created it, and the rollout acts on its phase in that job', async () => {
    const web = fakeWeb(() => 1);
    const providers = createMetricProviderRegistry([web.provider]);
    await createAnalysisTemplate(harness, 'instant', { metrics: [webMetric('once', { count: 1 })] });
    const key = await harness.createRollout(testRollout({ name: 'rounds', replicas: 2, steps: [] }));
    await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000, providers });
    await harness.patchSpec(key, {
      strategy: {
        canary: { steps: [{ setWeight: 50 }, { analysis: { templates: [{ templateName: 'instant' }] } }] },
      },
      template: {
        metadata: { labels: { app: 'rounds' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    let runs: AnalysisRun[] = [];
    for (let job = 0; job < 60 && runs.length === 0; job++) {
      await reconcileWithAnalysis(harness, key, providers);
      runs = await analysisRunsOf(harness, key);
      if (runs.length === 0) await harness.sandbox.advance(1_000);
    }
    // The job that created the run measured it (Successful, count 1) and the rollout moved past the step.
    expect(runs.map((r) => r.status?.phase)).toEqual(['Successful']);
    expect(web.seen).toHaveLength(1);
    const status = (await harness.observe(key)).rollout.status;
    expect(status?.currentStepIndex).toBe(2);
  });
});
