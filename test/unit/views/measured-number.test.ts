import { describe, expect, it } from 'vitest';
import { measuredNumber } from '../../../src/views/measured-number.ts';

describe('measuredNumber', () => {
  const rows: Array<[string | undefined, number | undefined]> = [
    ['[0.99]', 0.99],
    ['42', 42],
    ['"7.5"', 7.5],
    ['["3"]', 3],
    [' 12 ', 12],
    ['-1e3', -1000],
    ['[0.9, 0.8]', undefined],
    ['[]', undefined],
    ['ok', undefined],
    ['{"a":1}', undefined],
    ['', undefined],
    ['""', undefined],
    [undefined, undefined],
    ['NaN', undefined],
  ];
  for (const [value, want] of rows)
    it(`${JSON.stringify(value)} → ${String(want)}`, () => expect(measuredNumber(value)).toBe(want));
});
