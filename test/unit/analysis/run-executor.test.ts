// reconcileAnalysisRun over fake providers and a fake JobRunner, driven by a ManualClock.
import { describe, expect, it } from 'vitest';
import {
  DUE_AGAIN_REQUEUE_MS,
  reconcileAnalysisRun,
  type AnalysisRunOutcome,
} from '../../../src/analysis/run-executor.ts';
import { createJobProvider } from '../../../src/analysis/providers/job-provider.ts';
import type {
  JobManifest,
  JobOwner,
  JobRunStatus,
  JobRunner,
} from '../../../src/analysis/providers/job-runner.ts';
import {
  createMetricProviderRegistry,
  type MetricProvider,
} from '../../../src/analysis/providers/metric-provider.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { AnalysisRun, Metric } from '../../../src/manifest/analysis.ts';

function aRun(metrics: Metric[], spec: Partial<AnalysisRun['spec']> = {}): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'web-7d4f-2', namespace: 'shop', uid: 'run-uid' },
    spec: { metrics, ...spec },
  };
}

/** A prometheus stand-in answering from a list of values (the last one repeats), or throwing. */
function scripted(values: Array<unknown | Error>): MetricProvider & { calls: number } {
  const provider = {
    type: 'prometheus',
    calls: 0,
    measure() {
      const value = values[Math.min(provider.calls, values.length - 1)];
      provider.calls++;
      if (value instanceof Error) return Promise.reject(value);
      return Promise.resolve({ value, raw: JSON.stringify(value) });
    },
  };
  return provider;
}

const promMetric = (fields: Partial<Metric> = {}): Metric => ({
  name: 'success-rate',
  successCondition: 'result[0] >= 0.95',
  provider: { prometheus: { address: 'http://prom', query: 'q' } },
  ...fields,
});

/** Reconciles until the run finishes or `maxPasses`, advancing the clock by each requeue delay. */
async function drive(run: AnalysisRun, providers: MetricProvider[], clock: ManualClock, maxPasses = 50) {
  const registry = createMetricProviderRegistry(providers);
  let current = run;
  const outcomes: AnalysisRunOutcome[] = [];
  for (let i = 0; i < maxPasses; i++) {
    const outcome = await reconcileAnalysisRun(current, { providers: registry, now: clock.now() });
    outcomes.push(outcome);
    current = { ...current, status: outcome.status };
    if (outcome.requeueAfterMs === undefined) break;
    clock.advance(outcome.requeueAfterMs);
  }
  return { run: current, outcomes };
}

describe('reconcileAnalysisRun', () => {
  it('measures at each interval until count, then Successful', async () => {
    const clock = new ManualClock();
    const provider = scripted([[0.99]]);
    const { run, outcomes } = await drive(
      aRun([promMetric({ interval: '10s', count: 3 })]),
      [provider],
      clock,
    );
    expect(run.status?.phase).toBe('Successful');
    expect(provider.calls).toBe(3);
    expect(outcomes.map((o) => o.requeueAfterMs)).toEqual([10_000, 10_000, undefined]);
    const result = run.status?.metricResults?.[0];
    expect(result).toMatchObject({ count: 3, successful: 3, phase: 'Successful' });
    expect(result?.measurements?.map((m) => m.value)).toEqual(['[0.99]', '[0.99]', '[0.99]']);
    expect(result?.measurements?.[2]?.finishedAt).toBe(
      new Date(Date.UTC(2026, 0, 1, 0, 0, 20)).toISOString(),
    );
  });

  it('fails the run on a bad value', async () => {
    const clock = new ManualClock();
    const { run } = await drive(
      aRun([promMetric({ interval: '10s', count: 3 })]),
      [scripted([[0.99], [0.4]])],
      clock,
    );
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.message).toContain('assessed Failed');
  });

  it('records provider errors as Error measurements and gives up after consecutiveErrorLimit', async () => {
    const clock = new ManualClock();
    const provider = scripted([new Error('connect ECONNREFUSED 10.0.0.1:9090')]);
    const { run } = await drive(aRun([promMetric()]), [provider], clock);
    expect(run.status?.phase).toBe('Error');
    expect(provider.calls).toBe(5);
    expect(run.status?.metricResults?.[0]?.measurements?.[0]).toMatchObject({
      phase: 'Error',
      message: 'connect ECONNREFUSED 10.0.0.1:9090',
    });
    expect(run.status?.message).toContain('consecutiveErrorLimit (4)');
  });

  it('recovers when the provider comes back before the limit', async () => {
    const clock = new ManualClock();
    const { run } = await drive(
      aRun([promMetric()]),
      [scripted([new Error('down'), new Error('down'), [0.97]])],
      clock,
    );
    expect(run.status?.phase).toBe('Successful');
    expect(run.status?.metricResults?.[0]).toMatchObject({ error: 2, successful: 1, consecutiveError: 0 });
  });

  it('a condition that fails to evaluate is a measurement Error, not a crash', async () => {
    const clock = new ManualClock();
    const { run } = await drive(aRun([promMetric({ consecutiveErrorLimit: 0 })]), [scripted([[]])], clock);
    expect(run.status?.phase).toBe('Error');
    expect(run.status?.metricResults?.[0]?.measurements?.[0]?.message).toMatch(/index out of range/);
  });

  it('both conditions and neither true: Inconclusive', async () => {
    const clock = new ManualClock();
    const metric = promMetric({ successCondition: 'result[0] > 0.99', failureCondition: 'result[0] < 0.5' });
    const { run } = await drive(aRun([metric]), [scripted([[0.8]])], clock);
    expect(run.status?.phase).toBe('Inconclusive');
  });

  it('reports an unsupported provider as an Error naming it', async () => {
    const clock = new ManualClock();
    const metric: Metric = { name: 'dd', provider: { datadog: { query: 'x' } }, consecutiveErrorLimit: 0 };
    const { run } = await drive(aRun([metric]), [scripted([1])], clock);
    expect(run.status?.phase).toBe('Error');
    expect(run.status?.metricResults?.[0]?.measurements?.[0]?.message).toMatch(
      /provider "datadog" is not supported yet/,
    );
  });

  it('keeps secret values out of stored messages and values', async () => {
    const clock = new ManualClock();
    const leaky: MetricProvider = {
      type: 'web',
      measure: (metric) => Promise.reject(new Error(`GET ${metric.provider.web?.url ?? ''} failed`)),
    };
    const run = aRun(
      [{ name: 'hook', provider: { web: { url: '{{args.url}}' } }, consecutiveErrorLimit: 0 }],
      {
        args: [{ name: 'url', valueFrom: { secretKeyRef: { name: 's', key: 'url' } } }],
      },
    );
    const outcome = await reconcileAnalysisRun(run, {
      providers: createMetricProviderRegistry([leaky]),
      now: clock.now(),
      resolveSecret: () => Promise.resolve('https://token:hunter2@hooks.example/x'),
    });
    expect(JSON.stringify(outcome.status)).not.toContain('hunter2');
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.message).toBe('GET [redacted] failed');
  });

  it('keeps only the first 256 characters of a stored value, saying how much was cut', async () => {
    const clock = new ManualClock();
    const huge: MetricProvider = {
      type: 'prometheus',
      measure: () => Promise.resolve({ value: [0.99], raw: 'x'.repeat(10_000) }),
    };
    const outcome = await reconcileAnalysisRun(aRun([promMetric()]), {
      providers: createMetricProviderRegistry([huge]),
      now: clock.now(),
    });
    expect(outcome.status.metricResults?.[0]?.measurements?.[0]?.value).toBe(
      `${'x'.repeat(256)}… (9744 more characters)`,
    );
  });

  it('checks a measurement still in flight with no resume time again after 1 s, not in a tight loop', async () => {
    const clock = new ManualClock();
    const pending: MetricProvider = {
      type: 'prometheus',
      measure: () => Promise.resolve({ value: null, phase: 'Running' }),
    };
    const outcome = await reconcileAnalysisRun(aRun([promMetric()]), {
      providers: createMetricProviderRegistry([pending]),
      now: clock.now(),
    });
    expect(outcome.status.phase).toBe('Running');
    expect(outcome.requeueAfterMs).toBe(1_000);
    expect(outcome.requeueAfterMs).toBe(DUE_AGAIN_REQUEUE_MS);
  });

  it('measures several metrics in one pass and wakes for the soonest', async () => {
    const clock = new ManualClock();
    const a = scripted([[1]]);
    const registry = createMetricProviderRegistry([a]);
    const run = aRun([
      promMetric({ name: 'a', interval: '30s' }),
      promMetric({ name: 'b', interval: '10s' }),
    ]);
    const outcome = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(outcome.measured).toEqual(['a', 'b']);
    expect(outcome.requeueAfterMs).toBe(10_000);
  });
});

class FakeJobRunner implements JobRunner {
  readonly jobs = new Map<string, { job: JobManifest; owner: JobOwner; status: JobRunStatus }>();
  readonly deleted: string[] = [];
  next: JobRunStatus = 'Running';

  create(namespace: string, job: JobManifest, owner: JobOwner): Promise<string> {
    const key = `${namespace}/${job.metadata.name}`;
    if (!this.jobs.has(key)) this.jobs.set(key, { job, owner, status: 'Running' });
    return Promise.resolve(job.metadata.name);
  }
  status(namespace: string, name: string): Promise<JobRunStatus> {
    const entry = this.jobs.get(`${namespace}/${name}`);
    if (entry === undefined) return Promise.reject(new Error(`job ${name} not found`));
    entry.status = this.next;
    return Promise.resolve(entry.status);
  }
  delete(namespace: string, name: string): Promise<void> {
    this.deleted.push(`${namespace}/${name}`);
    this.jobs.delete(`${namespace}/${name}`);
    return Promise.resolve();
  }
}

const jobMetric: Metric = {
  name: 'smoke',
  provider: {
    job: {
      spec: {
        template: { spec: { containers: [{ name: 't', image: 'alpine' }], restartPolicy: 'Never' } },
        backoffLimit: 0,
      },
    },
  },
};

describe('job metrics', () => {
  it('runs the Job owned by the run, waits for it, succeeds and cleans up', async () => {
    const clock = new ManualClock();
    const runner = new FakeJobRunner();
    const registry = createMetricProviderRegistry([createJobProvider(runner)]);
    let run = aRun([jobMetric]);
    const first = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(first.status.phase).toBe('Running');
    expect(first.requeueAfterMs).toBe(5_000);
    const [created] = [...runner.jobs.values()];
    expect(created?.owner).toEqual({
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'AnalysisRun',
      name: 'web-7d4f-2',
      uid: 'run-uid',
    });
    expect(created?.job.metadata.name).toBe('web-7d4f-2-smoke-1');
    expect(created?.job.spec).toEqual(jobMetric.provider.job?.spec);

    run = { ...run, status: first.status };
    clock.advance(5_000);
    const second = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(second.status.phase).toBe('Running');
    expect(runner.jobs.size).toBe(1);

    runner.next = 'Succeeded';
    run = { ...run, status: second.status };
    clock.advance(5_000);
    const third = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    expect(third.status.phase).toBe('Successful');
    expect(runner.deleted).toEqual(['shop/web-7d4f-2-smoke-1']);
    const measurements = third.status.metricResults?.[0]?.measurements ?? [];
    expect(measurements).toHaveLength(1);
    expect(measurements[0]).toMatchObject({
      phase: 'Successful',
      startedAt: new Date(Date.UTC(2026, 0, 1)).toISOString(),
    });
  });

  it('a failed Job fails the run', async () => {
    const clock = new ManualClock();
    const runner = new FakeJobRunner();
    runner.next = 'Failed';
    const { run } = await drive(aRun([jobMetric]), [createJobProvider(runner)], clock);
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.metricResults?.[0]?.measurements?.[0]?.message).toBe('Job web-7d4f-2-smoke-1 failed');
  });

  it('terminating the run deletes a running Job', async () => {
    const clock = new ManualClock();
    const runner = new FakeJobRunner();
    const registry = createMetricProviderRegistry([createJobProvider(runner)]);
    const run = aRun([{ ...jobMetric, interval: '1m' }]);
    const first = await reconcileAnalysisRun(run, { providers: registry, now: clock.now() });
    clock.advance(1_000);
    const terminated = await reconcileAnalysisRun(
      { ...run, spec: { ...run.spec, terminate: true }, status: first.status },
      { providers: registry, now: clock.now() },
    );
    expect(terminated.status.phase).toBe('Successful');
    expect(terminated.requeueAfterMs).toBeUndefined();
    expect(runner.deleted).toEqual(['shop/web-7d4f-2-smoke-1']);
  });
});
