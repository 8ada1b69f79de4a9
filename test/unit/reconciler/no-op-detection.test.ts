// No-op detection and write validation in the executor: what is skipped, what is refused.
import { describe, expect, it } from 'vitest';
import { isStatusNoop } from '../../../src/reconciler/action-executor.ts';
import { isScaleNoop, validateAnnotations } from '../../../src/reconciler/actions/scale-replica-set.ts';
import { formatLabelSelector } from '../../../src/kube/label-selector.ts';

describe('isScaleNoop', () => {
  const live = {
    replicas: 3,
    annotations: { 'rollgate.dev/scale-down-deadline': '2026-01-01T00:00:30Z', other: 'x' },
  };
  it('skips a scale to the same count with annotations already in place', () => {
    expect(isScaleNoop(live, { replicas: 3 })).toBe(true);
    expect(
      isScaleNoop(live, {
        replicas: 3,
        annotations: { 'rollgate.dev/scale-down-deadline': '2026-01-01T00:00:30Z' },
      }),
    ).toBe(true);
    expect(isScaleNoop(live, { replicas: 3, annotations: { missing: null } })).toBe(true);
  });
  it('sends the write when the count, an annotation value, or a removal differs', () => {
    expect(isScaleNoop(live, { replicas: 2 })).toBe(false);
    expect(
      isScaleNoop(live, {
        replicas: 3,
        annotations: { 'rollgate.dev/scale-down-deadline': '2026-01-01T00:01:00Z' },
      }),
    ).toBe(false);
    expect(isScaleNoop(live, { replicas: 3, annotations: { other: null } })).toBe(false);
  });
});

describe('isStatusNoop', () => {
  it('ignores key order and undefined members', () => {
    expect(
      isStatusNoop({ phase: 'Healthy', replicas: 3 }, { replicas: 3, phase: 'Healthy', message: undefined }),
    ).toBe(true);
    expect(isStatusNoop(undefined, {})).toBe(true);
  });
  it('sees any real difference, also deep in arrays', () => {
    expect(isStatusNoop({ phase: 'Healthy' }, { phase: 'Progressing' })).toBe(false);
    expect(
      isStatusNoop(
        { pauseConditions: [{ reason: 'CanaryPauseStep', startTime: 'a' }] },
        { pauseConditions: [{ reason: 'CanaryPauseStep', startTime: 'b' }] },
      ),
    ).toBe(false);
    expect(isStatusNoop({ pauseConditions: [] }, {})).toBe(false);
  });
});

describe('validateAnnotations', () => {
  it('accepts RFC 3339 deadlines and removals', () => {
    expect(
      validateAnnotations({ 'rollgate.dev/scale-down-deadline': '2026-01-01T00:00:30Z' }),
    ).toBeUndefined();
    expect(
      validateAnnotations({ 'rollgate.dev/scale-down-deadline': '2026-01-01T00:00:30.123+02:00' }),
    ).toBeUndefined();
    expect(validateAnnotations({ 'rollgate.dev/scale-down-deadline': null })).toBeUndefined();
    expect(validateAnnotations(undefined)).toBeUndefined();
  });
  it('refuses an empty or unparsable deadline (F3)', () => {
    expect(validateAnnotations({ 'rollgate.dev/scale-down-deadline': '' })).toMatch(/RFC 3339/);
    expect(validateAnnotations({ 'rollgate.dev/scale-down-deadline': 'soon' })).toMatch(/"soon"/);
    expect(validateAnnotations({ 'rollgate.dev/scale-down-deadline': '2026-13-45T99:00:00Z' })).toMatch(
      /RFC 3339/,
    );
  });
});

describe('formatLabelSelector', () => {
  it('renders matchLabels and every expression operator in the API syntax', () => {
    expect(
      formatLabelSelector({
        matchLabels: { b: '2', a: '1' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['web', 'api'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'canary', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('a=1,b=2,tier in (api,web),env notin (dev),canary,!legacy');
    expect(formatLabelSelector({})).toBe('');
  });
});
