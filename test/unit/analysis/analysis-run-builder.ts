// Test builder for AnalysisRuns: metrics, settings and recorded measurements in a few readable calls.
import type { AnalysisRun, Measurement, Metric } from '../../../src/manifest/analysis.ts';
import { recordMeasurement } from '../../../src/analysis/record-measurement.ts';

export const T0 = new Date('2026-01-01T00:00:00.000Z');

/** `T0 + seconds`. */
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

/** A metric with a web provider (never called by the planner) and the given fields. */
export function aMetric(name: string, fields: Partial<Metric> = {}): Metric {
  return { name, provider: { web: { url: 'http://example.invalid/' } }, ...fields };
}

/** Builds a run; `measured` records completed measurements at successive times, as the executor would. */
export class AnalysisRunBuilder {
  private run: AnalysisRun;

  constructor(metrics: Metric[]) {
    this.run = {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'AnalysisRun',
      metadata: { name: 'run', namespace: 'default', uid: 'uid-1' },
      spec: { metrics },
      status: { phase: 'Running', startedAt: T0.toISOString() },
    };
  }

  withSpec(fields: Partial<AnalysisRun['spec']>): this {
    this.run = { ...this.run, spec: { ...this.run.spec, ...fields } };
    return this;
  }

  /** Records measurements of `metric` with the given phases, the i-th finishing at `startSeconds + i * stepSeconds`. */
  measured(metric: string, phases: Array<Measurement['phase']>, startSeconds = 0, stepSeconds = 0): this {
    phases.forEach((phase, i) => {
      const when = at(startSeconds + i * stepSeconds);
      this.run = recordMeasurement(
        this.run,
        metric,
        { phase, value: '1', startedAt: when.toISOString(), finishedAt: when.toISOString() },
        when,
      );
    });
    return this;
  }

  /** Records an in-flight measurement (no finishedAt). */
  inFlight(
    metric: string,
    startedSeconds: number,
    resumeSeconds?: number,
    metadata?: Record<string, string>,
  ): this {
    const when = at(startedSeconds);
    this.run = recordMeasurement(
      this.run,
      metric,
      {
        phase: 'Running',
        startedAt: when.toISOString(),
        ...(resumeSeconds !== undefined && { resumeAt: at(resumeSeconds).toISOString() }),
        ...(metadata && { metadata }),
      },
      when,
    );
    return this;
  }

  build(): AnalysisRun {
    return this.run;
  }
}

export const aRun = (...metrics: Metric[]): AnalysisRunBuilder => new AnalysisRunBuilder(metrics);
