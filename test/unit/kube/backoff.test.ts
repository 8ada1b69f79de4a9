// Backoff: exponential, bounded, jittered within its band.
import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../../src/kube/backoff.ts';

describe('backoffDelayMs', () => {
  const policy = { baseMs: 100, maxMs: 1_000, jitter: 0.5 };

  it('doubles per attempt and never exceeds the cap', () => {
    const top = { ...policy, random: () => 1 };
    expect([0, 1, 2, 3, 4, 10, 100].map((a) => backoffDelayMs(a, top))).toEqual([
      100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it('keeps the jittered delay within [ceiling*(1-jitter), ceiling]', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const seen = new Set<number>();
    for (let i = 0; i < 200; i += 1) {
      const d = backoffDelayMs(2, { ...policy, random });
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
      seen.add(d);
    }
    expect(seen.size).toBeGreaterThan(20);
  });

  it('with no jitter is deterministic', () => {
    expect(backoffDelayMs(1, { baseMs: 50, maxMs: 2000, jitter: 0, random: () => 0.3 })).toBe(100);
  });
});
