// Issue 26 (rollgate-edit lends Rollgate's rights): a job metric's pod may not ask for more than a plain pod.
import { describe, expect, it } from 'vitest';
import { createJobProvider } from '../../../src/analysis/providers/job-provider.ts';
import { jobPodRefusal } from '../../../src/analysis/providers/job-pod-policy.ts';
import type { JobManifest, JobRunner } from '../../../src/analysis/providers/job-runner.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import type { AnalysisRun } from '../../../src/manifest/analysis.ts';

const jobSpec = (pod: Record<string, unknown>, container: Record<string, unknown> = {}) => ({
  template: {
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'check', image: 'busybox', ...container }],
      ...pod,
    },
  },
});

const policy = { serviceAccounts: ['smoke-tests'] };

describe('jobPodRefusal', () => {
  const rows: Array<{ name: string; spec: unknown; want: string | undefined }> = [
    { name: 'a plain pod', spec: jobSpec({}), want: undefined },
    { name: 'the default account', spec: jobSpec({ serviceAccountName: 'default' }), want: undefined },
    { name: 'an allowed account', spec: jobSpec({ serviceAccountName: 'smoke-tests' }), want: undefined },
    {
      name: 'another account',
      spec: jobSpec({ serviceAccountName: 'deployer' }),
      want: 'serviceAccountName',
    },
    {
      name: 'the deprecated field',
      spec: jobSpec({ serviceAccount: 'deployer' }),
      want: 'serviceAccountName',
    },
    { name: 'hostNetwork', spec: jobSpec({ hostNetwork: true }), want: 'hostNetwork' },
    { name: 'hostPID', spec: jobSpec({ hostPID: true }), want: 'hostPID' },
    { name: 'hostIPC', spec: jobSpec({ hostIPC: true }), want: 'hostIPC' },
    {
      name: 'a hostPath volume',
      spec: jobSpec({ volumes: [{ name: 'root', hostPath: { path: '/' } }] }),
      want: 'hostPath',
    },
    { name: 'privileged', spec: jobSpec({}, { securityContext: { privileged: true } }), want: 'privileged' },
    {
      name: 'a privileged init container',
      spec: jobSpec({ initContainers: [{ name: 'i', securityContext: { privileged: true } }] }),
      want: 'privileged',
    },
    {
      name: 'SYS_ADMIN',
      spec: jobSpec({}, { securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }),
      want: 'capability',
    },
    {
      name: 'NET_BIND_SERVICE',
      spec: jobSpec({}, { securityContext: { capabilities: { add: ['NET_BIND_SERVICE'] } } }),
      want: undefined,
    },
    {
      name: 'a hostPort',
      spec: jobSpec({}, { ports: [{ containerPort: 80, hostPort: 80 }] }),
      want: 'hostPort',
    },
    { name: 'nonsense shapes', spec: { template: 'x' }, want: undefined },
    { name: 'null', spec: null, want: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const refusal = jobPodRefusal(row.spec, policy);
      if (row.want === undefined) expect(refusal).toBeUndefined();
      else expect(refusal).toContain(row.want);
    });
  }
});

describe('the job provider with a privileged pod spec', () => {
  it('creates no Job and records an Error measurement saying why', async () => {
    const created: JobManifest[] = [];
    const runner: JobRunner = {
      create: (_ns, job) => {
        created.push(job);
        return Promise.resolve(job.metadata.name);
      },
      status: () => Promise.resolve('Running'),
      delete: () => Promise.resolve(),
    };
    const run: AnalysisRun = {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'AnalysisRun',
      metadata: { name: 'r', namespace: 'team-a', uid: 'u' },
      spec: {
        metrics: [
          {
            name: 'escape',
            provider: {
              job: {
                spec: jobSpec(
                  { hostPID: false, serviceAccountName: 'default' },
                  { securityContext: { privileged: true } },
                ),
              },
            },
          },
        ],
      },
    };
    const outcome = await reconcileAnalysisRun(run, {
      providers: createMetricProviderRegistry([createJobProvider(runner)]),
      now: new Date(0),
    });
    expect(created).toEqual([]);
    const measurement = outcome.status.metricResults?.[0]?.measurements?.[0];
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toContain('container "check" is privileged');
  });
});
