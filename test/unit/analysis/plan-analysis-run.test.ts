// Table tests for the pure AnalysisRun planner: counts, limits, errors, dry run, delays, retention, terminate.
import { describe, expect, it } from 'vitest';
import { planAnalysisRun } from '../../../src/analysis/plan-analysis-run.ts';
import type { AnalysisPhase, AnalysisRun } from '../../../src/manifest/analysis.ts';
import { aMetric, aRun, at, T0 } from './analysis-run-builder.ts';

interface Row {
  name: string;
  given: AnalysisRun;
  now: Date;
  wantPhase: AnalysisPhase;
  wantMeasure: string[];
  wantRequeueAfterMs?: number;
  wantMetricPhases?: Record<string, AnalysisPhase>;
}

const rows: Row[] = [
  {
    name: 'a new metric without interval is measured at once',
    given: aRun(aMetric('m')).build(),
    now: T0,
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'initialDelay holds the first measurement back',
    given: aRun(aMetric('m', { initialDelay: '30s' })).build(),
    now: at(10),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 20_000,
  },
  {
    name: 'initialDelay elapsed: measure',
    given: aRun(aMetric('m', { initialDelay: '30s' })).build(),
    now: at(30),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'count not reached: wait for the interval',
    given: aRun(aMetric('m', { interval: '10s', count: 3 }))
      .measured('m', ['Successful', 'Successful'], 0, 10)
      .build(),
    now: at(15),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 5_000,
  },
  {
    name: 'interval elapsed: measure again',
    given: aRun(aMetric('m', { interval: '10s', count: 3 }))
      .measured('m', ['Successful', 'Successful'], 0, 10)
      .build(),
    now: at(20),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'count reached with successes: Successful',
    given: aRun(aMetric('m', { interval: '10s', count: 3 }))
      .measured('m', ['Successful', 'Successful', 'Successful'], 0, 10)
      .build(),
    now: at(20),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'count as a string (from an arg) is read as a number',
    given: aRun(aMetric('m', { interval: '10s', count: '2' }))
      .measured('m', ['Successful', 'Successful'], 0, 10)
      .build(),
    now: at(20),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'no interval: one measurement completes the metric',
    given: aRun(aMetric('m')).measured('m', ['Successful']).build(),
    now: at(1),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'failureLimit defaults to 0: one failure fails the run',
    given: aRun(aMetric('m', { interval: '10s', count: 5 }))
      .measured('m', ['Failed'])
      .build(),
    now: at(1),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'failureLimit 2: two failures keep running',
    given: aRun(aMetric('m', { interval: '10s', count: 5, failureLimit: 2 }))
      .measured('m', ['Failed', 'Failed'], 0, 10)
      .build(),
    now: at(20),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'failureLimit 2: a third failure fails',
    given: aRun(aMetric('m', { interval: '10s', count: 5, failureLimit: 2 }))
      .measured('m', ['Failed', 'Failed', 'Failed'], 0, 10)
      .build(),
    now: at(20),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'failureLimit -1: failures never fail the metric',
    given: aRun(aMetric('m', { interval: '1s', count: 4, failureLimit: -1 }))
      .measured('m', ['Failed', 'Failed', 'Failed', 'Failed'], 0, 1)
      .build(),
    now: at(4),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'inconclusiveLimit defaults to 0: one inconclusive makes the run Inconclusive',
    given: aRun(aMetric('m', { interval: '10s', count: 5 }))
      .measured('m', ['Inconclusive'])
      .build(),
    now: at(1),
    wantPhase: 'Inconclusive',
    wantMeasure: [],
  },
  {
    name: 'inconclusiveLimit 1 tolerates one',
    given: aRun(aMetric('m', { interval: '10s', count: 5, inconclusiveLimit: 1 }))
      .measured('m', ['Inconclusive'])
      .build(),
    now: at(10),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'four consecutive errors (default limit 4) keep running, retried after 10s',
    given: aRun(aMetric('m')).measured('m', ['Error', 'Error', 'Error', 'Error'], 0, 10).build(),
    now: at(31),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 9_000,
  },
  {
    name: 'five consecutive errors: Error',
    given: aRun(aMetric('m')).measured('m', ['Error', 'Error', 'Error', 'Error', 'Error'], 0, 10).build(),
    now: at(41),
    wantPhase: 'Error',
    wantMeasure: [],
  },
  {
    name: 'a success resets the consecutive error streak',
    given: aRun(aMetric('m', { interval: '1s', count: 10 }))
      .measured(
        'm',
        ['Error', 'Error', 'Error', 'Error', 'Successful', 'Error', 'Error', 'Error', 'Error'],
        0,
        1,
      )
      .build(),
    now: at(9),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'consecutiveErrorLimit 0: the first error is an Error',
    given: aRun(aMetric('m', { consecutiveErrorLimit: 0 }))
      .measured('m', ['Error'])
      .build(),
    now: at(1),
    wantPhase: 'Error',
    wantMeasure: [],
  },
  {
    name: 'an error with a short interval is retried at that interval',
    given: aRun(aMetric('m', { interval: '5s', count: 3 }))
      .measured('m', ['Error'])
      .build(),
    now: at(1),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 4_000,
  },
  {
    name: 'an error with a long interval is retried after 10s',
    given: aRun(aMetric('m', { interval: '5m', count: 3 }))
      .measured('m', ['Error'])
      .build(),
    now: at(1),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 9_000,
  },
  {
    name: 'errors do not count toward count',
    given: aRun(aMetric('m', { interval: '1s', count: 2 }))
      .measured('m', ['Successful', 'Error'], 0, 1)
      .build(),
    now: at(2),
    wantPhase: 'Running',
    wantMeasure: ['m'],
  },
  {
    name: 'interval without count runs on and on',
    given: aRun(aMetric('m', { interval: '1s' }))
      .measured(
        'm',
        Array.from({ length: 50 }, () => 'Successful' as const),
        0,
        1,
      )
      .build(),
    now: at(49.5),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 500,
  },
  {
    name: 'terminate ends an endless metric as Successful',
    given: aRun(aMetric('m', { interval: '1s' }))
      .measured('m', ['Successful', 'Successful'], 0, 1)
      .withSpec({ terminate: true })
      .build(),
    now: at(5),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'terminate before any measurement: Successful',
    given: aRun(aMetric('m', { initialDelay: '1m' }))
      .withSpec({ terminate: true })
      .build(),
    now: at(1),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'terminate does not turn a failure into success',
    given: aRun(aMetric('bad', { interval: '1s', count: 5 }), aMetric('good', { interval: '1s' }))
      .measured('good', ['Successful'])
      .measured('bad', ['Failed'])
      .withSpec({ terminate: true })
      .build(),
    now: at(2),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'one failed metric ends the run at once; the others stop as Successful',
    given: aRun(aMetric('bad', { interval: '1s', count: 5 }), aMetric('endless', { interval: '1s' }))
      .measured('endless', ['Successful'])
      .measured('bad', ['Failed'])
      .build(),
    now: at(1),
    wantPhase: 'Failed',
    wantMeasure: [],
    wantMetricPhases: { bad: 'Failed', endless: 'Successful' },
  },
  {
    name: 'dry-run metric failing never fails the run',
    given: aRun(aMetric('dry', { interval: '1s', count: 2 }), aMetric('real'))
      .withSpec({ dryRun: [{ metricName: 'dry' }] })
      .measured('dry', ['Failed', 'Failed'], 0, 1)
      .measured('real', ['Successful'])
      .build(),
    now: at(2),
    wantPhase: 'Successful',
    wantMeasure: [],
    wantMetricPhases: { dry: 'Failed', real: 'Successful' },
  },
  {
    name: 'dry run by regular expression covers every metric: the run succeeds whatever they measure',
    given: aRun(aMetric('a'), aMetric('b'))
      .withSpec({ dryRun: [{ metricName: '.*' }] })
      .measured('a', ['Failed'])
      .measured('b', ['Error', 'Error', 'Error', 'Error', 'Error'], 0, 10)
      .build(),
    now: at(50),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'a dry-run pattern matches whole names: "error" does not take "errors-5xx" out of the verdict',
    given: aRun(aMetric('error'), aMetric('errors-5xx'))
      .withSpec({ dryRun: [{ metricName: 'error' }] })
      .measured('error', ['Failed'])
      .measured('errors-5xx', ['Failed'])
      .build(),
    now: at(1),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'a dry-run failure does not stop the other metrics',
    given: aRun(aMetric('dry'), aMetric('real', { interval: '10s', count: 3 }))
      .withSpec({ dryRun: [{ metricName: 'dry' }] })
      .measured('dry', ['Failed'])
      .measured('real', ['Successful'])
      .build(),
    now: at(10),
    wantPhase: 'Running',
    wantMeasure: ['real'],
  },
  {
    name: 'run phase is the worst metric phase: Failed beats Error and Inconclusive',
    given: aRun(aMetric('i'), aMetric('e', { consecutiveErrorLimit: 0 }), aMetric('f'))
      .measured('i', ['Inconclusive'])
      .measured('e', ['Error'])
      .measured('f', ['Failed'])
      .build(),
    now: at(1),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'run phase: Error beats Inconclusive',
    given: aRun(aMetric('i'), aMetric('e', { consecutiveErrorLimit: 0 }))
      .measured('i', ['Inconclusive'])
      .measured('e', ['Error'])
      .build(),
    now: at(1),
    wantPhase: 'Error',
    wantMeasure: [],
  },
  {
    name: 'consecutiveSuccessLimit reached: Successful before count',
    given: aRun(aMetric('m', { interval: '1s', count: 10, consecutiveSuccessLimit: 2, failureLimit: -1 }))
      .measured('m', ['Failed', 'Successful', 'Successful'], 0, 1)
      .build(),
    now: at(3),
    wantPhase: 'Successful',
    wantMeasure: [],
  },
  {
    name: 'consecutiveSuccessLimit not reached within count, no failureLimit: Failed',
    given: aRun(aMetric('m', { interval: '1s', count: 3, consecutiveSuccessLimit: 2, failureLimit: -1 }))
      .measured('m', ['Successful', 'Failed', 'Successful'], 0, 1)
      .build(),
    now: at(3),
    wantPhase: 'Failed',
    wantMeasure: [],
  },
  {
    name: 'consecutiveSuccessLimit not reached within count, failureLimit not reached: Inconclusive',
    given: aRun(aMetric('m', { interval: '1s', count: 3, consecutiveSuccessLimit: 2, failureLimit: 2 }))
      .measured('m', ['Successful', 'Failed', 'Successful'], 0, 1)
      .build(),
    now: at(3),
    wantPhase: 'Inconclusive',
    wantMeasure: [],
  },
  {
    name: 'an in-flight measurement is checked again at resumeAt',
    given: aRun(aMetric('job')).inFlight('job', 0, 5).build(),
    now: at(2),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 3_000,
  },
  {
    name: 'an in-flight measurement past resumeAt is due',
    given: aRun(aMetric('job')).inFlight('job', 0, 5).build(),
    now: at(5),
    wantPhase: 'Running',
    wantMeasure: ['job'],
  },
  {
    name: 'the next wake-up is the soonest of all metrics',
    given: aRun(aMetric('slow', { interval: '1m' }), aMetric('fast', { interval: '7s' }))
      .measured('slow', ['Successful'])
      .measured('fast', ['Successful'])
      .build(),
    now: at(2),
    wantPhase: 'Running',
    wantMeasure: [],
    wantRequeueAfterMs: 5_000,
  },
  {
    name: 'count above 1 without an interval is refused (Argo validation), not left waiting forever',
    given: aRun(aMetric('m', { count: 2 })).build(),
    now: at(0),
    wantPhase: 'Error',
    wantMeasure: [],
  },
  {
    name: 'an unreadable interval is the metric Error, reported on the run',
    given: aRun(aMetric('m', { interval: 'soon' })).build(),
    now: at(0),
    wantPhase: 'Error',
    wantMeasure: [],
  },
];

describe('planAnalysisRun', () => {
  it.each(rows)('$name', ({ given, now, wantPhase, wantMeasure, wantRequeueAfterMs, wantMetricPhases }) => {
    const plan = planAnalysisRun(given, now);
    expect(plan.status.phase).toBe(wantPhase);
    expect(plan.measure).toEqual(wantMeasure);
    expect(plan.requeueAfterMs).toBe(wantRequeueAfterMs);
    for (const [metric, phase] of Object.entries(wantMetricPhases ?? {})) {
      expect(plan.status.metricResults?.find((r) => r.name === metric)?.phase).toBe(phase);
    }
  });

  it('says why a metric failed, in the run message', () => {
    const run = aRun(aMetric('rate', { interval: '1s', count: 5, failureLimit: 1 }))
      .measured('rate', ['Failed', 'Failed'], 0, 1)
      .build();
    const plan = planAnalysisRun(run, at(2));
    expect(plan.status.message).toBe('Metric "rate" assessed Failed due to failed (2) > failureLimit (1)');
    expect(plan.status.runSummary).toEqual({ count: 1, successful: 0, failed: 1, inconclusive: 0, error: 0 });
  });

  it('carries the last error message into an Error verdict', () => {
    const withError = aRun(aMetric('m', { consecutiveErrorLimit: 0 })).build();
    const plan = planAnalysisRun(
      {
        ...withError,
        status: {
          ...withError.status,
          metricResults: [
            {
              name: 'm',
              phase: 'Running',
              error: 1,
              consecutiveError: 1,
              message: 'connection refused',
              measurements: [{ phase: 'Error', message: 'connection refused', finishedAt: T0.toISOString() }],
            },
          ],
        },
      },
      at(1),
    );
    expect(plan.status.phase).toBe('Error');
    expect(plan.status.message).toContain('connection refused');
  });

  it('keeps a finished run exactly as it is', () => {
    const run = aRun(aMetric('m')).measured('m', ['Failed']).build();
    const finished = { ...run, status: planAnalysisRun(run, at(1)).status };
    const again = planAnalysisRun({ ...finished, spec: { ...finished.spec, terminate: true } }, at(100));
    expect(again.status).toEqual(finished.status);
    expect(again.measure).toEqual([]);
    expect(again.requeueAfterMs).toBeUndefined();
  });

  it('ends an in-flight measurement on terminate and asks the provider to stop it', () => {
    const run = aRun(aMetric('job', { interval: '10s' }))
      .inFlight('job', 0, 5, { 'job-name': 'run-job-1' })
      .withSpec({ terminate: true })
      .build();
    const plan = planAnalysisRun(run, at(3));
    expect(plan.status.phase).toBe('Successful');
    expect(plan.status.message).toBe('Run Terminated');
    expect(plan.terminate).toEqual(['job']);
    const last = plan.status.metricResults?.[0]?.measurements?.at(-1);
    expect(last).toMatchObject({
      phase: 'Successful',
      message: 'Metric terminated',
      finishedAt: at(3).toISOString(),
    });
  });

  it('stamps startedAt on the first plan and measures relative to it', () => {
    const run = { ...aRun(aMetric('m', { initialDelay: '5s' })).build(), status: undefined };
    const first = planAnalysisRun(run, at(100));
    expect(first.status.startedAt).toBe(at(100).toISOString());
    expect(first.requeueAfterMs).toBe(5_000);
    expect(planAnalysisRun({ ...run, status: first.status }, at(105)).measure).toEqual(['m']);
  });

  it('reports dry-run results in their own summary', () => {
    const run = aRun(aMetric('dry'), aMetric('real'))
      .withSpec({ dryRun: [{ metricName: 'dry' }] })
      .measured('dry', ['Failed'])
      .measured('real', ['Successful'])
      .build();
    const plan = planAnalysisRun(run, at(1));
    expect(plan.status.runSummary).toEqual({ count: 1, successful: 1, failed: 0, inconclusive: 0, error: 0 });
    expect(plan.status.dryRunSummary).toEqual({
      count: 1,
      successful: 0,
      failed: 1,
      inconclusive: 0,
      error: 0,
    });
    expect(plan.status.metricResults?.find((r) => r.name === 'dry')?.dryRun).toBe(true);
  });
});

describe('measurementRetention', () => {
  it('keeps 10 measurements by default but counts them all', () => {
    const run = aRun(aMetric('m', { interval: '1s' }))
      .measured(
        'm',
        Array.from({ length: 25 }, () => 'Successful' as const),
        0,
        1,
      )
      .build();
    const result = run.status?.metricResults?.[0];
    expect(result?.measurements).toHaveLength(10);
    expect(result?.count).toBe(25);
    expect(result?.measurements?.at(-1)?.finishedAt).toBe(at(24).toISOString());
  });

  it('keeps what measurementRetention says, matched by name or pattern', () => {
    const run = aRun(aMetric('short', { interval: '1s' }), aMetric('long-a', { interval: '1s' }))
      .withSpec({
        measurementRetention: [
          { metricName: 'short', limit: 2 },
          { metricName: 'long-.*', limit: 30 },
        ],
      })
      .measured(
        'short',
        Array.from({ length: 5 }, () => 'Successful' as const),
        0,
        1,
      )
      .measured(
        'long-a',
        Array.from({ length: 20 }, () => 'Successful' as const),
        0,
        1,
      )
      .build();
    expect(run.status?.metricResults?.find((r) => r.name === 'short')?.measurements).toHaveLength(2);
    expect(run.status?.metricResults?.find((r) => r.name === 'long-a')?.measurements).toHaveLength(20);
  });

  it('still fails on the failure count when the failures left the history', () => {
    const run = aRun(aMetric('m', { interval: '1s', count: 20, failureLimit: 2 }))
      .withSpec({ measurementRetention: [{ metricName: 'm', limit: 1 }] })
      .measured('m', ['Failed', 'Failed', 'Successful', 'Failed'], 0, 1)
      .build();
    expect(run.status?.metricResults?.[0]?.measurements).toHaveLength(1);
    expect(planAnalysisRun(run, at(4)).status.phase).toBe('Failed');
  });
});
