import { describe, expect, it } from 'vitest';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import {
  FIRST_HOLD_MS,
  ForgeRefusals,
  LONGEST_HOLD_MS,
  isForgeRefusal,
} from '../../../src/promoter/forge-refusal.ts';

const context = { provider: 'github', repository: 'acme/deploy', operation: 'find open pull request' };

describe('forge refusals', () => {
  it('holds a refused promotion for a minute, doubling to an hour, and a good answer ends the hold', () => {
    const refusals = new ForgeRefusals();
    expect(refusals.holding('p', 0)).toBeUndefined();
    expect(refusals.refuse('p', 'HTTP 401', 0).holdUntil).toBe(FIRST_HOLD_MS);
    expect(refusals.holding('p', FIRST_HOLD_MS - 1)?.reason).toBe('HTTP 401');
    expect(refusals.holding('other', 1)).toBeUndefined();
    expect(refusals.holding('p', FIRST_HOLD_MS)).toBeUndefined();
    expect(refusals.refuse('p', 'HTTP 401', 100).holdUntil).toBe(100 + 2 * FIRST_HOLD_MS);
    for (let i = 0; i < 10; i += 1) refusals.refuse('p', 'HTTP 401', 0);
    expect(refusals.refuse('p', 'HTTP 401', 0).holdUntil).toBe(LONGEST_HOLD_MS);
    refusals.clear('p');
    expect(refusals.refuse('p', 'HTTP 403', 0)).toEqual({
      failures: 1,
      holdUntil: FIRST_HOLD_MS,
      reason: 'HTTP 403',
    });
  });

  it('a refused token or a missing repository holds; outages, conflicts and other errors do not', () => {
    expect(isForgeRefusal(new ForgeError('forge.unauthorized', 'HTTP 401', context))).toBe(true);
    expect(isForgeRefusal(new ForgeError('forge.not_found', 'HTTP 404', context))).toBe(true);
    expect(isForgeRefusal(new ForgeError('forge.unavailable', 'HTTP 502', context))).toBe(false);
    expect(isForgeRefusal(new ForgeError('forge.conflict', 'HTTP 422', context))).toBe(false);
    expect(isForgeRefusal(new Error('HTTP 401'))).toBe(false);
  });
});
