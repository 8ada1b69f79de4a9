// Tests for the Argo/Go-style duration parser.
import { describe, it, expect } from 'vitest';
import { parseDuration, isDuration, DurationError } from '../../../src/manifest/duration.ts';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5h', 5_400_000],
    ['2m30s', 150_000],
    ['0', 0],
    ['0s', 0],
    ['30', 30_000],
    [' 10s ', 10_000],
    ['1500us', 1.5],
    [45, 45_000],
    [0, 0],
  ] as const)('reads %j as %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    ['', 'is empty'],
    ['abc', 'unexpected "abc"'],
    ['10x', 'unexpected "10x"'],
    ['1h30', 'missing unit after "30"'],
    ['-5s', 'must not be negative'],
    ['5 m', 'unexpected "5 m"'],
  ])('refuses %j with a reason', (input, reason) => {
    let caught: unknown;
    try {
      parseDuration(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DurationError);
    const err = caught as DurationError;
    expect(err.code).toBe('rollgate.spec.duration');
    expect(err.value).toBe(input);
    expect(err.message).toContain(reason);
  });

  it('refuses negative and fractional integers', () => {
    expect(() => parseDuration(-1)).toThrow(DurationError);
    expect(() => parseDuration(1.5)).toThrow(/whole seconds/);
  });
});

describe('isDuration', () => {
  it('says yes to what parses and no to the rest', () => {
    expect(isDuration('1h30m')).toBe(true);
    expect(isDuration(10)).toBe(true);
    expect(isDuration('soon')).toBe(false);
    expect(isDuration(null)).toBe(false);
    expect(isDuration({})).toBe(false);
  });
});
