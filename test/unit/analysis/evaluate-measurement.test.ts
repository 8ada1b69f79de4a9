// How a measured value becomes Successful / Failed / Inconclusive / Error under a metric's conditions.
import { describe, expect, it } from 'vitest';
import { evaluateMeasurement } from '../../../src/analysis/evaluate-measurement.ts';

describe('evaluateMeasurement', () => {
  it.each<[string, { successCondition?: string; failureCondition?: string }, unknown, string]>([
    ['no conditions: Successful (as Argo code)', {}, 42, 'Successful'],
    ['success only, true', { successCondition: 'result[0] >= 0.95' }, [0.99], 'Successful'],
    ['success only, false → Failed', { successCondition: 'result[0] >= 0.95' }, [0.5], 'Failed'],
    ['failure only, true', { failureCondition: 'result[0] > 0.1' }, [0.5], 'Failed'],
    ['failure only, false → Successful', { failureCondition: 'result[0] > 0.1' }, [0.01], 'Successful'],
    [
      'both, success true',
      { successCondition: 'result > 90', failureCondition: 'result < 50' },
      95,
      'Successful',
    ],
    [
      'both, failure true',
      { successCondition: 'result > 90', failureCondition: 'result < 50' },
      10,
      'Failed',
    ],
    [
      'both, neither → Inconclusive',
      { successCondition: 'result > 90', failureCondition: 'result < 50' },
      70,
      'Inconclusive',
    ],
    [
      'both true: failure wins',
      { successCondition: 'result > 1', failureCondition: 'result > 2' },
      3,
      'Failed',
    ],
    ['empty strings count as absent', { successCondition: '', failureCondition: ' ' }, 1, 'Successful'],
  ])('%s', (_name, metric, value, phase) => {
    expect(evaluateMeasurement(metric, value).phase).toBe(phase);
  });

  it('turns an evaluation error into an Error measurement with the reason', () => {
    const verdict = evaluateMeasurement({ successCondition: 'result[0] >= 0.95' }, []);
    expect(verdict).toEqual({
      phase: 'Error',
      message: expect.stringMatching(/^successCondition: index out of range/),
    });
  });

  it('turns a syntax error into an Error measurement, not a throw', () => {
    const verdict = evaluateMeasurement({ failureCondition: 'result >= ' }, 1);
    expect(verdict.phase).toBe('Error');
    expect(verdict.message).toMatch(/failureCondition: unexpected end of expression \(column 11/);
  });

  it('requires a bool', () => {
    expect(evaluateMeasurement({ successCondition: 'result[0]' }, [1])).toEqual({
      phase: 'Error',
      message: expect.stringContaining('expected bool, but got int'),
    });
  });

  it('judges NaN from Prometheus as Argo users expect', () => {
    expect(evaluateMeasurement({ successCondition: 'result[0] >= 0.95' }, [NaN]).phase).toBe('Failed');
    expect(
      evaluateMeasurement({ successCondition: 'isNaN(result[0]) || result[0] >= 0.95' }, [NaN]).phase,
    ).toBe('Successful');
  });
});
