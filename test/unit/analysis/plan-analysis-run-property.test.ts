// Randomized planner runs: whatever the settings and measurements, the planner is total, never stalls and respects its limits.
import { describe, expect, it } from 'vitest';
import { isCompletedPhase } from '../../../src/analysis/analysis-phase.ts';
import { planAnalysisRun } from '../../../src/analysis/plan-analysis-run.ts';
import { recordMeasurement } from '../../../src/analysis/record-measurement.ts';
// mulberry32, seeded, so a failing case reproduces.
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import type { AnalysisRun, Measurement, Metric } from '../../../src/manifest/analysis.ts';
import { T0 } from './analysis-run-builder.ts';

const PHASES: Array<Measurement['phase']> = [
  'Successful',
  'Successful',
  'Successful',
  'Failed',
  'Inconclusive',
  'Error',
];

describe('planAnalysisRun under random runs', () => {
  it('300 random runs: finite, never stalled, limits respected, final phases stick', () => {
    const random = new SeededRandom(2026);
    const next = (): number => random.next();
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    for (let trial = 0; trial < 300; trial++) {
      const metrics: Metric[] = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, i) => ({
        name: `m${i}`,
        provider: { web: { url: 'http://x' } },
        ...(next() < 0.7 && { interval: pick(['1s', '5s', '30s']) }),
        ...(next() < 0.7 && { count: pick([1, 2, 5]) }),
        ...(next() < 0.5 && { failureLimit: pick([0, 1, 3, -1]) }),
        ...(next() < 0.3 && { inconclusiveLimit: pick([0, 1]) }),
        ...(next() < 0.3 && { consecutiveErrorLimit: pick([0, 2]) }),
        ...(next() < 0.2 && { initialDelay: '3s' }),
      }));
      const endless = metrics.some((m) => m.interval !== undefined && m.count === undefined);
      let run: AnalysisRun = {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'AnalysisRun',
        metadata: { name: 'r' },
        spec: { metrics, ...(next() < 0.2 && { dryRun: [{ metricName: 'm0' }] }) },
      };
      let now = T0.getTime();
      let passes = 0;
      let plan = planAnalysisRun(run, new Date(now));
      while (!isCompletedPhase(plan.status.phase)) {
        passes++;
        if (endless && passes === 40) {
          run = { ...run, spec: { ...run.spec, terminate: true } };
          plan = planAnalysisRun(run, new Date(now));
          if (isCompletedPhase(plan.status.phase)) break;
        }
        expect(passes, JSON.stringify(metrics)).toBeLessThan(200);
        // Pure: the same input gives the same plan.
        expect(planAnalysisRun(run, new Date(now))).toEqual(plan);
        run = { ...run, status: plan.status };
        if (plan.measure.length > 0) {
          for (const name of plan.measure)
            run = recordMeasurement(run, name, { phase: pick(PHASES) }, new Date(now));
        } else {
          // Never stalled: an unfinished run always has something due or a time to wake up.
          expect(plan.requeueAfterMs ?? -1, JSON.stringify({ metrics, status: plan.status })).toBeGreaterThan(
            0,
          );
          now += plan.requeueAfterMs ?? 0;
        }
        plan = planAnalysisRun(run, new Date(now));
      }
      const final = { ...run, status: plan.status };
      for (const metric of metrics) {
        const result = final.status.metricResults?.find((r) => r.name === metric.name);
        expect(result?.measurements?.length ?? 0).toBeLessThanOrEqual(10);
        const limit = metric.failureLimit ?? 0;
        if (result?.phase === 'Failed' && Number(limit) >= 0 && metric.count !== undefined) {
          expect(result.failed ?? 0).toBeGreaterThan(Number(limit));
        }
        if (Number(limit) >= 0 && (result?.failed ?? 0) > Number(limit) && final.spec.dryRun === undefined) {
          expect(final.status.phase).toBe('Failed');
        }
      }
      // Final means final: a later plan, even with terminate, changes nothing.
      const later = planAnalysisRun(
        { ...final, spec: { ...final.spec, terminate: true } },
        new Date(now + 3_600_000),
      );
      expect(later.status).toEqual(final.status);
      expect(later.measure).toEqual([]);
    }
  });
});
