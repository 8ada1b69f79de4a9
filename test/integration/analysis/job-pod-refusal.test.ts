// Issue 26 (rollgate-edit lends Rollgate's rights): through the cluster's providers, a privileged job metric makes no Job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { createClusterMetricProviders } from '../../../src/reconciler/analysis-run-reconciler.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { sandboxJobSpec } from '../../support/sandbox-job.ts';
import { ReconcileHarness } from '../reconcile/reconcile-harness.ts';

const NAMESPACE = 'team-a';

describe('job metrics on the sandbox, with the limits of a default configuration', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 2626 });
    await harness.clients.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });
  afterAll(async () => harness.stop());

  const measure = async (name: string, spec: Record<string, unknown>) => {
    const metric: Metric = { name: 'smoke', provider: { job: { spec } } };
    // A real run, so the Job's owner exists (the sandbox's garbage collector removes orphans).
    const run = (await harness.clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'AnalysisRun',
        metadata: { name },
        spec: { metrics: [metric] },
      },
    })) as AnalysisRun;
    const providers = createClusterMetricProviders(harness.clients, {
      allowedHosts: [],
      deniedHosts: [],
      jobServiceAccounts: [],
    });
    const outcome = await reconcileAnalysisRun(run, { providers, now: harness.clock.now() });
    const jobs = await harness.clients.batch.listNamespacedJob({ namespace: NAMESPACE });
    return {
      measurement: outcome.status.metricResults?.[0]?.measurements?.[0],
      jobs: jobs.items.map((j) => j.metadata?.name),
    };
  };

  it('refuses a privileged, hostPID pod running as another ServiceAccount: no Job, an Error measurement', async () => {
    const base = sandboxJobSpec('succeed');
    const escape = {
      ...base,
      template: {
        ...base.template,
        spec: {
          ...base.template.spec,
          serviceAccountName: 'kube-admin',
          hostPID: true,
          containers: [{ name: 'check', image: 'check:1', securityContext: { privileged: true } }],
        },
      },
    };
    const { measurement, jobs } = await measure('escape', escape);
    expect(jobs).toEqual([]);
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toContain('serviceAccountName "kube-admin"');
  });

  it('runs a plain pod as before', async () => {
    const { measurement, jobs } = await measure('plain', sandboxJobSpec('succeed'));
    expect(measurement?.phase).toBe('Running');
    expect(jobs).toEqual(['plain-smoke-1']);
  });
});
