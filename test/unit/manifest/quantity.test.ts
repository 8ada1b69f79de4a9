// Tests for the Kubernetes resource quantity parser.
import { describe, it, expect } from 'vitest';
import { parseQuantity, isQuantity, isWholeQuantity, QuantityError } from '../../../src/manifest/quantity.ts';

describe('parseQuantity', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1.5', 1.5],
    ['128Mi', 128 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['1k', 1000],
    ['1M', 1e6],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['.5', 0.5],
    ['+1', 1],
    [4, 4],
  ] as const)('reads %j as %d', (input, value) => {
    expect(parseQuantity(input)).toBeCloseTo(value, 9);
  });

  it.each(['invalid', '1GB', '1 Gi', '', 'Mi', '1.2.3', '--1', '1mi'])('refuses %j', (input) => {
    expect(() => parseQuantity(input)).toThrow(QuantityError);
    expect(isQuantity(input)).toBe(false);
  });

  it('names the value and the expected form in the error', () => {
    expect(() => parseQuantity('invalid')).toThrow(
      'invalid quantity "invalid": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
    );
  });
});

describe('isWholeQuantity (extended resources are counted in whole units)', () => {
  it.each([1, '2', '2000m', '1.5Ki', '1e3', '3k', '0', '+4'])('%j is whole', (input) => {
    expect(isWholeQuantity(input)).toBe(true);
  });

  it.each(['500m', '1.5', '1e-3', '2.0001', 'invalid', '1n'])('%j is not', (input) => {
    expect(isWholeQuantity(input)).toBe(false);
  });
});
