// The job metric provider's JobRunner against the sandbox's Job controller: create (idempotent), status, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeJobRunner } from '../../../src/reconciler/job-runner.ts';
import { sandboxJobSpec } from '../../support/sandbox-job.ts';
import { ReconcileHarness, NAMESPACE } from './reconcile-harness.ts';

describe('createKubeJobRunner', () => {
  let harness: ReconcileHarness;
  const owner = { apiVersion: 'rollgate.dev/v1alpha1', kind: 'AnalysisRun' as const, name: 'run-1', uid: '' };
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    // A real owner: Jobs whose owner does not exist are garbage collected at once.
    const run = (await harness.clients.custom.createNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      body: {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'AnalysisRun',
        metadata: { name: 'run-1' },
        spec: { metrics: [{ name: 'check', provider: { job: { spec: sandboxJobSpec('succeed') } } }] },
      },
    })) as { metadata: { uid: string } };
    owner.uid = run.metadata.uid;
  });
  afterAll(async () => harness.stop());

  it('reports Running, then Succeeded or Failed as the Job ends, and deletes it', async () => {
    const runner = createKubeJobRunner(harness.clients);
    for (const result of ['succeed', 'fail'] as const) {
      const name = `metric-${result}`;
      expect(
        await runner.create(NAMESPACE, { metadata: { name }, spec: sandboxJobSpec(result) }, owner),
      ).toBe(name);
      // Creating it again is not an error.
      expect(
        await runner.create(NAMESPACE, { metadata: { name }, spec: sandboxJobSpec(result) }, owner),
      ).toBe(name);
      await harness.sandbox.settle();
      expect(await runner.status(NAMESPACE, name)).toBe('Running');
      await harness.sandbox.advance(10_000);
      expect(await runner.status(NAMESPACE, name)).toBe(result === 'succeed' ? 'Succeeded' : 'Failed');
      const job = await harness.clients.batch.readNamespacedJob({ namespace: NAMESPACE, name });
      expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ name: 'run-1', controller: true });
      await runner.delete(NAMESPACE, name);
      await runner.delete(NAMESPACE, name);
      await expect(runner.status(NAMESPACE, name)).rejects.toMatchObject({ code: 'kube.not_found' });
    }
  });
});
